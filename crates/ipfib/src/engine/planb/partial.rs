//! Partial rebuilds, for live tables: a change rebuilds only the chunks it touches.
//!
//! PlanB is partitioned already: the direct table names one tree per top-16-bit chunk, and a
//! tree's lines live in a shared segment. A partial rebuild builds the touched chunks' trees
//! from the routes that overlap each chunk (the routes containing it and those inside it) into
//! one new segment, points the touched chunks' entries at it (copying only the pages of the
//! per-chunk tables they are in, `pages`), and shares every other segment and page with the
//! version before. A segment no chunk uses any more is replaced by an empty placeholder whose
//! number the next new segment takes, so the memory of a replaced tree goes with the last
//! version that can see it and no other chunk's segment number changes.
//!
//! A live table's full build (and its settling merge) gives its segment room to grow
//! ([`Segment::with_room`](super::line::Segment::with_room)). Then a partial rebuild appends
//! the rebuilt chunks' lines to that segment in place instead (`Tree::with_chunks_appended`):
//! past the lines of every published version, which keep reading their own prefix. While
//! every chunk is in that segment the table keeps flat entries and one segment, so lookups
//! take the one-segment walk through every publish; the chunks' fallback cells join the
//! segment's cells (a new list each time: they are few). Rebuilds that find the room taken or
//! too small go to a new segment as above (the entries are paged again until a merge). The
//! home segment's dead lines and cells go with a merge into a new one with room, when the
//! table settles or the room is nearly spent.
//!
//! A partial rebuild declines (the caller builds in full, which also compacts) when:
//! - a change touches very many chunks (a short prefix: a /8 covers 256 of them, a /0 all);
//! - a touched chunk now needs a deeper tree than the table's uniform depth;
//! - the replaced trees' dead lines would make the table much larger than a full build, or
//!   the segments would be too many.
//!
//! Dead lines are reclaimed by *compaction steps* (`compact_parts`, behind
//! [`crate::engine::Lookup::compact`]), which a live table runs while no update waits: each
//! copies the live chunks of the emptiest segments (a bounded number of lines) into a new one,
//! so the segments they came from are dropped, without ever rebuilding the whole table.

use std::collections::HashMap;

use super::builder::{
    chunk_content, chunk_prefix, depth_for, narrow_fits, project, SegmentBuilder,
};
use super::fallback::Fallback;
use super::layout::{chunk_of, entry_line, Answer, Decoded, Family, Key, DIRECT_BITS, LEAF_ENTRY};
use super::pages::MAX_SEGMENTS;
use super::staged;
use super::tree::Parts;
use super::PlanB;
use crate::interval::Intervals;
use crate::prefix::Prefix;
use crate::route_table::RouteTable;

/// A change touching more chunks than this rebuilds in full (a full build visits all 65,536).
const MAX_TOUCHED: usize = 4096;
/// A partial rebuild declines when the lines of all segments would exceed the last full
/// used lines by more than this factor (plus [`SLACK_LINES`], so small tables
/// do not rebuild in full on every change). Compaction steps normally keep far less.
const MAX_GROWTH: f64 = 3.0;
/// Dead lines a compacted segment may keep: 1/`COMPACT_SLACK` of its lines.
const COMPACT_SLACK: usize = 12;
/// Segments beyond which compaction also merges small ones (fewer segments: a smaller
/// segment table scan per publish).
const MANY_SEGMENTS: usize = 16;
/// Lines of growth always allowed (1 MiB of lines).
const SLACK_LINES: usize = 1 << 14;

/// Changes in one chunk beyond which its content is recomputed from all its routes rather than
/// edited change by change (each edit costs a pass over the chunk's boundaries).
const MAX_EDITS: usize = 16;

/// Chunks a compaction step visits between two polls of its interruption check (a settling
/// merge of a 2 MB table takes about 5 ms: a poll every ~20 µs).
const MERGE_POLL: usize = 256;

/// A chunk's answers as a step function over its coarse addresses: `answers[i]` holds from
/// `starts[i]` to the next start; `starts[0]` is the chunk's first coarse address.
struct Steps {
    starts: Vec<u64>,
    answers: Vec<Answer>,
}

impl Steps {
    /// The answer at coarse address `x` (at or after `starts[0]`).
    fn at(&self, x: u64) -> Answer {
        self.answers[self.starts.partition_point(|&s| s <= x) - 1]
    }

    /// The chunk's tree keys and answers (what [`SegmentBuilder::chunk`] takes), merging
    /// equal neighbours.
    fn into_tree<K: Key>(self) -> (Vec<K>, Vec<Answer>) {
        let mut keys = Vec::with_capacity(self.starts.len());
        let mut answers: Vec<Answer> = Vec::with_capacity(self.starts.len());
        for (i, (s, a)) in self.starts.into_iter().zip(self.answers).enumerate() {
            if answers.last() == Some(&a) {
                continue;
            }
            if i > 0 {
                keys.push(K::from_coarse(s - 1));
            }
            answers.push(a);
        }
        (keys, answers)
    }
}

/// The range of coarse addresses whose answers a change of `p` can alter inside `chunk`, as
/// the prefix to recompute them from: `p` itself, widened to the chunk when it is shorter and
/// to its coarse cell when it is longer (the cell's other routes shape the cell's fallback
/// intervals too).
fn recompute_scope<A: Family>(p: Prefix<A>, chunk: usize) -> Prefix<A> {
    if p.len() < DIRECT_BITS as u8 {
        chunk_prefix(chunk)
    } else {
        Prefix::covering(p.addr(), p.len().min(A::COARSE_BITS as u8))
    }
}

/// The chunks the changed prefixes overlap, ascending, or `None` when they are too many.
fn touched<A: Family>(changed: &[Prefix<A>]) -> Option<Vec<usize>> {
    let mut chunks: Vec<usize> = Vec::new();
    for p in changed {
        let first = chunk_of::<A>(p.first().coarse());
        let last = chunk_of::<A>(p.last().coarse());
        if last - first >= MAX_TOUCHED {
            return None;
        }
        chunks.extend(first..=last);
        if chunks.len() > 2 * MAX_TOUCHED {
            chunks.sort_unstable();
            chunks.dedup();
            if chunks.len() > MAX_TOUCHED {
                return None;
            }
        }
    }
    chunks.sort_unstable();
    chunks.dedup();
    (chunks.len() <= MAX_TOUCHED).then_some(chunks)
}

/// The trees [`PlanB::copy_chunk`] copied: (segment, entry line) to the new entry. The last
/// one found or copied is kept apart, so a run of chunks sharing one tree (most of an IPv6
/// table's 65,536 chunks are one-answer chunks, in long runs) costs no hashing.
#[derive(Default)]
struct Copied {
    last: Option<((usize, usize), u32)>,
    all: HashMap<(usize, usize), u32>,
}

impl Copied {
    fn get(&mut self, tree: (usize, usize)) -> Option<u32> {
        match self.last {
            Some((t, e)) if t == tree => Some(e),
            _ => {
                let e = *self.all.get(&tree)?;
                self.last = Some((tree, e));
                Some(e)
            }
        }
    }

    fn insert(&mut self, tree: (usize, usize), entry: u32) {
        self.all.insert(tree, entry);
        self.last = Some((tree, entry));
    }
}

impl<A: Family> PlanB<A> {
    /// The step function of `chunk` as this table answers it, its fallback cells copied into
    /// `fallback`.
    fn steps(&self, chunk: usize, fallback: &mut Fallback<A>) -> Steps {
        let segment = self.tree().segment(self.tree().chunk(chunk).0);
        let base = (chunk as u64) << (A::COARSE_BITS - DIRECT_BITS);
        let mut steps = Steps {
            starts: Vec::new(),
            answers: Vec::new(),
        };
        let mut cells = HashMap::new();
        for (start, decoded) in self.ranges(chunk) {
            steps.starts.push(base + start);
            steps.answers.push(match decoded {
                Decoded::Hop(h) => Answer::Route(h),
                Decoded::NoRoute => Answer::NoRoute,
                Decoded::Cell(c) => Answer::Cell(
                    *cells
                        .entry(c)
                        .or_insert_with(|| fallback.copy_cell(&segment.fallback, c)),
                ),
            });
        }
        steps
    }

    /// `chunk`'s ranges as this table answers them, in order: each one's start relative to
    /// the chunk's first coarse cell (the first starts at 0) and its answer. Read from the
    /// chunk's leaves, which are contiguous; each leaf's first answer repeats the previous
    /// leaf's last, so it is skipped.
    pub(super) fn ranges(&self, chunk: usize) -> impl Iterator<Item = (u64, Decoded)> + '_ {
        let (seg, _, first, last) = self.tree().span(chunk);
        let narrow = self.tree().narrow();
        let leaves = &self.tree().lines_of(seg)[first..=last];
        let slots = A::Key::leaf_keys(narrow);
        leaves.iter().enumerate().flat_map(move |(i, leaf)| {
            (usize::from(i > 0)..=A::Key::keys_in(leaf, slots)).map(move |r| {
                let start = match r {
                    0 => 0,
                    r => A::Key::to_low(A::Key::key_at(leaf, r - 1)) + 1,
                };
                (start, A::Key::decode_in(leaf, r as u32, narrow))
            })
        })
    }

    /// `chunk`'s boundaries and answers after `changes` (prefixes overlapping it): this
    /// table's, with the range each change can alter recomputed from the routes overlapping
    /// that range.
    fn edited(
        &self,
        table: &RouteTable<A>,
        chunk: usize,
        changes: &[Prefix<A>],
        fallback: &mut Fallback<A>,
    ) -> (Vec<A::Key>, Vec<Answer>) {
        if changes.len() > MAX_EDITS {
            return chunk_content(table, chunk, fallback);
        }
        let chunk_end = ((chunk as u64) + 1) << (A::COARSE_BITS - DIRECT_BITS);
        let mut steps = self.steps(chunk, fallback);
        // Inside a scope, of the routes containing it only the longest shows: one longer than
        // the chunk is looked up per change, a shorter one at most once per chunk.
        let whole = chunk_prefix::<A>(chunk);
        let mut chunk_cover = None;
        for &p in changes {
            let scope = recompute_scope(p, chunk);
            let (qs, qe) = (scope.first().coarse(), scope.last().coarse());
            let cover = match table.longest_containing_from(scope, DIRECT_BITS as u8 + 1) {
                Some(route) => Some(route),
                None => *chunk_cover.get_or_insert_with(|| table.longest_containing(whole)),
            };
            let overlapping: RouteTable<A> =
                cover.into_iter().chain(table.subnets(scope)).collect();
            let intervals = Intervals::from_table(&overlapping);
            let (cstarts, canswers) = project(intervals.starts(), intervals.values(), fallback);
            let new = Steps {
                starts: cstarts,
                answers: canswers,
            };
            let keep_before = steps.starts.partition_point(|&s| s < qs);
            let keep_after = steps.starts.partition_point(|&s| s <= qe + 1);
            let mut starts = steps.starts[..keep_before].to_vec();
            let mut answers = steps.answers[..keep_before].to_vec();
            starts.push(qs);
            answers.push(new.at(qs));
            let inside =
                new.starts.partition_point(|&s| s <= qs)..new.starts.partition_point(|&s| s <= qe);
            starts.extend_from_slice(&new.starts[inside.clone()]);
            answers.extend_from_slice(&new.answers[inside]);
            if qe + 1 < chunk_end {
                starts.push(qe + 1);
                answers.push(steps.at(qe + 1));
            }
            starts.extend_from_slice(&steps.starts[keep_after..]);
            answers.extend_from_slice(&steps.answers[keep_after..]);
            steps = Steps { starts, answers };
        }
        steps.into_tree()
    }

    /// The parts of this table rebuilt for `table` after `changed` changed (module docs), or
    /// `None` when a full build is the better answer.
    pub(super) fn partial_parts(
        &self,
        table: &RouteTable<A>,
        changed: &[Prefix<A>],
    ) -> Option<Parts<A>> {
        let chunks = touched(changed)?;
        if self.tree().segments().len() >= MAX_SEGMENTS {
            return None;
        }
        let (depth, narrow) = (self.tree().depth(), self.tree().narrow());
        let mut segment = SegmentBuilder::<A>::new(narrow);
        let mut constants = HashMap::new();
        let mut entries = Vec::with_capacity(chunks.len());
        let key_bits = A::COARSE_BITS - DIRECT_BITS;
        for &chunk in &chunks {
            let base = (chunk as u64) << key_bits;
            let end = base + ((1u64 << key_bits) - 1);
            let changes: Vec<Prefix<A>> = changed
                .iter()
                .copied()
                .filter(|p| p.first().coarse() <= end && p.last().coarse() >= base)
                .collect();
            let (keys, answers) = self.edited(table, chunk, &changes, &mut segment.fallback);
            // A chunk outgrowing the depth, or a next hop too wide for narrow leaves: the full
            // build chooses depth and format anew.
            if depth_for::<A::Key>(keys.len(), narrow) > depth || (narrow && !narrow_fits(&answers))
            {
                return None;
            }
            entries.push(segment.chunk(depth, &keys, &answers, &mut constants));
        }

        let tree = self.tree();
        let parts = tree
            .with_chunks_appended(&chunks, &entries, &segment)
            .or_else(|| tree.with_chunks_in(&chunks, &entries, segment, false))?;
        let lines = parts.lines();
        let live = parts.live_lines();
        if lines as f64 > live as f64 * MAX_GROWTH + SLACK_LINES as f64 {
            return None;
        }
        Some(parts)
    }

    /// Copies `chunk`'s lines into `into` (inner links moved by the offset, fallback cells
    /// copied and renumbered); returns its direct entry there ([`LEAF_ENTRY`] kept). `copied`
    /// has the trees copied before, so lines several chunks share are copied once. `None`
    /// when a renumbered cell no longer fits a narrow leaf's 16-bit slot (the caller gives up;
    /// a full build chooses the format anew).
    fn copy_chunk(
        &self,
        chunk: usize,
        into: &mut SegmentBuilder<A>,
        copied: &mut Copied,
        cells: &mut HashMap<(usize, u32), u32>,
    ) -> Option<u32> {
        // A tree copied already is found from the chunk's entry, without walking to its
        // leaves (`span`).
        let (seg, direct) = self.tree().chunk(chunk);
        if let Some(e) = copied.get((seg, entry_line(direct) as usize)) {
            return Some(e);
        }
        let (seg, entry, first_leaf, last) = self.tree().span(chunk);
        let leaf_entry = direct & LEAF_ENTRY;
        let narrow = self.tree().narrow();
        let segment = self.tree().segment(seg);
        let base = into.lines.len();
        for (at, line) in (entry..=last).zip(&segment.lines[entry..=last]) {
            let mut line = *line;
            if at < first_leaf {
                let link = A::Key::link(&line) as usize - entry + base;
                A::Key::set_link(&mut line, link as u32);
            } else {
                A::Key::renumber_cells(&mut line, narrow, |c| {
                    Some(
                        *cells
                            .entry((seg, c))
                            .or_insert_with(|| into.fallback.copy_cell(&segment.fallback, c)),
                    )
                })?;
            }
            into.push(line, at < first_leaf);
        }
        let new_entry = base as u32 | leaf_entry;
        copied.insert((seg, entry), new_entry);
        Some(new_entry)
    }

    /// Every chunk's tree copied into one segment with room to append (`None` when there is
    /// one already, with no dead lines and room left, and staged tables where `stage` asks
    /// for them): the layout a full build gives, without rebuilding a tree, so the walk is the
    /// one-segment walk again and the lines of replaced trees are freed. Work proportional to
    /// the table. The staged tables are made (by the caller's `from_parts`) only with `stage`:
    /// their choice cannot be interrupted, and an update arriving during a merge of the IPv6
    /// DFZ table waited for it (see `compact` in `mod.rs`).
    pub(super) fn merged_parts(
        &self,
        stage: bool,
        interrupted: &dyn Fn() -> bool,
    ) -> Option<Parts<A>> {
        let tree = self.tree();
        let unstaged = stage && self.staged.is_none() && staged::stages_structure(self);
        if tree.pages().is_empty()
            && tree.live()[0] >= tree.lines()
            && !tree.room_spent()
            && !unstaged
        {
            return None;
        }
        let mut segment = SegmentBuilder::<A>::new(self.tree().narrow());
        let (mut copied, mut cells) = (Copied::default(), HashMap::new());
        let chunks: Vec<usize> = (0..1usize << DIRECT_BITS).collect();
        let mut entries = Vec::with_capacity(chunks.len());
        for run in chunks.chunks(MERGE_POLL) {
            if interrupted() {
                return None;
            }
            for &c in run {
                entries.push(self.copy_chunk(c, &mut segment, &mut copied, &mut cells)?);
            }
        }
        let mut parts = self
            .tree()
            .with_chunks_in(&chunks, &entries, segment, true)?;
        parts.stage = stage;
        Some(parts)
    }

    /// One bounded step of compaction: live chunks of the segments with dead space (more than a
    /// twentieth) or, when there are many segments, of small ones, fewest live lines first,
    /// are copied into one new segment, about `budget` lines at most; emptied segments are
    /// dropped, and one larger than the budget is emptied over several steps (the new
    /// segments have no dead space, so they are not taken again). `None` when the table is
    /// compact already.
    pub(super) fn compact_parts(
        &self,
        budget: usize,
        interrupted: &dyn Fn() -> bool,
    ) -> Option<Parts<A>> {
        let n = self.tree().segments().len();
        if n == 1 {
            return None;
        }
        let lines: Vec<usize> = self
            .tree()
            .segments()
            .iter()
            .map(|s| s.lines.len())
            .collect();
        let live = self.tree().live();
        let users = self.tree().users();
        let dead_in = |s: usize| lines[s].saturating_sub(live[s]);
        // Placeholders of emptied segments (no chunk, no line) are nobody's victims.
        let used = users.iter().filter(|&&u| u > 0).count();
        // Victims: the segments with dead space, fewest live lines first; or, when there are
        // none and too many segments, at least two small ones to merge. Each step so either
        // reclaims dead lines or lowers the segment count: steps end.
        let by_live = |mut v: Vec<usize>| {
            v.sort_by_key(|&s| live[s]);
            v
        };
        // The segment partial rebuilds append to is no victim: its dead lines go with a
        // merge, when it is full or the table settles (`PlanB::compact`).
        let appendable = self.tree().appendable();
        let movable = |s: usize| Some(s) != appendable;
        let dead = by_live(
            (0..n)
                .filter(|&s| movable(s) && dead_in(s) * COMPACT_SLACK > lines[s])
                .collect(),
        );
        let small = by_live(if used > MANY_SEGMENTS {
            (0..n)
                .filter(|&s| movable(s) && users[s] > 0 && live[s] < budget / 2)
                .collect()
        } else {
            Vec::new()
        });
        let (candidates, at_least) = if dead.is_empty() {
            (small, 2)
        } else {
            (dead, 1)
        };
        let mut is_victim = vec![false; n];
        let (mut planned, mut chosen) = (0, 0);
        for &s in &candidates {
            if chosen >= at_least && planned + live[s] > budget {
                break;
            }
            is_victim[s] = true;
            planned += live[s];
            chosen += 1;
        }
        if chosen < at_least {
            return None;
        }
        let mut segment = SegmentBuilder::<A>::new(self.tree().narrow());
        let (mut copied, mut cells) = (Copied::default(), HashMap::new());
        let (mut moved, mut entries) = (Vec::new(), Vec::new());
        for chunk in 0..1usize << DIRECT_BITS {
            if chunk % MERGE_POLL == 0 && interrupted() {
                return None;
            }
            let (seg, _) = self.tree().chunk(chunk);
            if is_victim[seg] && segment.lines.len() < budget.max(1) {
                entries.push(self.copy_chunk(chunk, &mut segment, &mut copied, &mut cells)?);
                moved.push(chunk);
            }
        }
        if moved.is_empty() {
            return None;
        }

        let mut parts = self
            .tree()
            .with_chunks_in(&moved, &entries, segment, false)?;
        // A step that leaves one segment is a merge while updates may arrive: the staged
        // tables wait for settling, as in `merged_parts`.
        parts.stage = false;
        Some(parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Backend, Build, BuildOptions, Lookup};
    use crate::interval::Intervals;
    use crate::route_table::NextHop;
    use proptest::prelude::*;
    use std::sync::Arc;

    fn build(table: &RouteTable<u32>) -> PlanB<u32> {
        PlanB::build(table, &BuildOptions::with_backend(Backend::Scalar)).unwrap()
    }

    /// Options of a live table's builds: the home segment gets room for appends.
    fn live_options(backend: Backend) -> BuildOptions {
        BuildOptions {
            for_updates: true,
            ..BuildOptions::with_backend(backend)
        }
    }

    /// 300 /24s from 10.0.0.0/24 on (10.0/16 needs inner nodes) and 192.168.0.0/16 (a chunk
    /// with one answer).
    fn dense_and_covered() -> RouteTable<u32> {
        (0..300u32)
            .map(|i| (Prefix::new(0x0a00_0000 | (i << 8), 24).unwrap(), i))
            .chain([(Prefix::new(0xc0a8_0000, 16).unwrap(), 7)])
            .collect()
    }

    /// A full build as a live table makes it, with room to append.
    fn build_live(table: &RouteTable<u32>) -> PlanB<u32> {
        PlanB::build(table, &live_options(Backend::Scalar)).unwrap()
    }

    /// `t` answers every probe as a binary search over `table`'s intervals does, single and
    /// batched, and passes the validator.
    fn agrees<A: Family + std::fmt::LowerHex>(t: &PlanB<A>, table: &RouteTable<A>, probes: &[A]) {
        let intervals = Intervals::from_table(table);
        for &a in probes {
            assert_eq!(t.lookup(a), intervals.lookup(a), "address {a:#x}");
        }
        let mut batch = vec![None; probes.len()];
        t.lookup_batch(probes, &mut batch).unwrap();
        let want: Vec<Option<NextHop>> = probes.iter().map(|&a| intervals.lookup(a)).collect();
        assert_eq!(batch, want);
        t.validate().unwrap();
    }

    fn probes(table: &RouteTable<u32>) -> Vec<u32> {
        table
            .iter()
            .flat_map(|(p, _)| {
                [
                    p.first(),
                    p.last(),
                    p.first().wrapping_sub(1),
                    p.last().wrapping_add(1),
                ]
            })
            .chain((0..200u32).map(|i| i.wrapping_mul(0x0147_ae15)))
            .collect()
    }

    /// A live table's home segment has room: a change's chunks are appended to it, so every
    /// chunk stays in one segment and every lane of a batch walks from one base; the version
    /// before keeps its lines; another version derived from that one finds the room taken and
    /// adds a segment; when the room is nearly spent, a merge makes a new home with room.
    #[test]
    fn changes_append_to_a_home_segment_with_room() {
        let mut table = dense_and_covered();
        let old = build_live(&table);
        assert!(old.tree().segment(0).has_arena() && old.tree().pages().is_empty());
        assert!(
            !build(&table).tree().segment(0).has_arena(),
            "a static table has no room"
        );
        let before = table.clone();
        let p = Prefix::new(0xc0a8_0100, 24).unwrap();
        table.insert(p, 8);
        let mut new =
            PlanB::from_parts(old.partial_parts(&table, &[p]).unwrap(), Backend::Scalar).unwrap();
        assert_eq!(
            new.tree().segments().len(),
            1,
            "appended to the home segment"
        );
        assert!(
            new.tree().pages().is_empty(),
            "flat entries: the one-segment walk"
        );
        assert!(new.lines() > old.lines());
        assert_eq!(
            new.tree().lines_of(0).as_ptr(),
            old.tree().lines_of(0).as_ptr(),
            "one base for old and new lines"
        );
        for backend in Backend::available() {
            new.set_backend(backend).unwrap();
            agrees(&new, &table, &probes(&table));
        }
        agrees(&old, &before, &probes(&table));

        // A second version from `old` finds the room past its lines taken.
        let q = Prefix::new(0x0a01_0000, 16).unwrap();
        let mut other_table = before.clone();
        other_table.insert(q, 9);
        let other = PlanB::from_parts(
            old.partial_parts(&other_table, &[q]).unwrap(),
            Backend::Scalar,
        )
        .unwrap();
        assert_eq!(other.tree().segments().len(), 2, "a segment of its own");
        assert!(!other.tree().pages().is_empty(), "paged");
        agrees(&other, &other_table, &probes(&other_table));
        agrees(&new, &table, &probes(&table));

        // Changes in 100 chunks at a time fill the room; compaction steps leave the home
        // segment alone, and once its room is nearly spent a merge makes a new one.
        table.extend((0..400u32).flat_map(|c| {
            (0..20u32).map(move |i| (Prefix::new(((0x1000 + c) << 16) | (i << 8), 24).unwrap(), i))
        }));
        let mut t = build_live(&table);
        let mut rounds = 0u32;
        while !t.tree().room_spent() {
            let changed: Vec<Prefix<u32>> = (0..100u32)
                .map(|c| Prefix::new(((0x1000 + (c * 4 + rounds) % 400) << 16) | 0x8000, 24))
                .map(Result::unwrap)
                .collect();
            for &p in &changed {
                table.insert(p, rounds);
            }
            t = PlanB::from_parts(t.partial_parts(&table, &changed).unwrap(), Backend::Scalar)
                .unwrap();
            assert_eq!(t.tree().segments().len(), 1, "round {rounds} appended");
            assert!(t.compact_parts(1 << 20, &|| false).is_none(), "no victim");
            rounds += 1;
            assert!(rounds < 1000, "the room fills");
        }
        assert!(rounds > 2, "{rounds} rounds");
        agrees(&t, &table, &probes(&table));
        let merged =
            PlanB::from_parts(t.merged_parts(true, &|| false).unwrap(), Backend::Scalar).unwrap();
        assert!(merged.tree().pages().is_empty() && merged.tree().segment(0).has_arena());
        assert!(!merged.tree().room_spent() && merged.lines() < t.lines());
        agrees(&merged, &table, &probes(&table));
        table.insert(p, 10);
        let again = PlanB::from_parts(merged.partial_parts(&table, &[p]).unwrap(), Backend::Scalar)
            .unwrap();
        assert_eq!(again.tree().segments().len(), 1, "appended to the new home");
        agrees(&again, &table, &probes(&table));
    }

    #[test]
    fn a_change_rebuilds_its_chunk_into_a_new_segment() {
        let mut table = dense_and_covered();
        let old = build(&table);
        let p = Prefix::new(0xc0a8_0100, 24).unwrap();
        table.insert(p, 8);
        let new =
            PlanB::from_parts(old.partial_parts(&table, &[p]).unwrap(), Backend::Scalar).unwrap();
        assert_eq!(
            new.tree().segments().len(),
            2,
            "the old segment is shared, the chunk is new"
        );
        assert!(Arc::ptr_eq(
            &new.tree().segments()[0],
            &old.tree().segments()[0]
        ));
        assert_eq!(new.tree().chunk(0xc0a8).0, 1);
        assert_eq!(new.tree().chunk(0x0a00).0, 0);
        agrees(&new, &table, &probes(&table));
        agrees(
            &old,
            &table.iter().filter(|&(q, _)| q != p).collect(),
            &probes(&table),
        );
        assert_eq!(new.intervals(), None);

        // Changing the chunk again leaves the second segment unused: it is dropped.
        table.remove(p);
        let newer =
            PlanB::from_parts(new.partial_parts(&table, &[p]).unwrap(), Backend::Scalar).unwrap();
        assert_eq!(newer.tree().segments().len(), 2);
        assert!(!Arc::ptr_eq(
            &newer.tree().segments()[1],
            &new.tree().segments()[1]
        ));
        agrees(&newer, &table, &probes(&table));
        // Only the page of the changed chunk is copied; the other 63 are the same memory.
        assert_eq!(newer.tree().pages().shared_with(new.tree().pages()), 63);
        assert_eq!(
            newer.tree().pages().pages().len(),
            new.tree().pages().pages().len()
        );
        assert!(old.tree().pages().is_empty() && !new.tree().pages().is_empty());
    }

    #[test]
    fn batches_walk_a_home_segment_and_look_up_lanes_from_other_segments_again() {
        // A dense chunk (10.0/16: depth 2, with other chunks entered at their leaf) and one or
        // two /24s in each of 600 others; probes in table order, so every group of lanes mixes
        // chunks of the home segment with rebuilt ones.
        let mut table: RouteTable<u32> = (0..200u32)
            .map(|i| (Prefix::new(0x0a00_0000 | (i << 8), 24).unwrap(), i))
            .chain((0..600u32).flat_map(|i| {
                let chunk = 0x1400_0000 + i * 0x0007_0000;
                [
                    (Prefix::new(chunk | 0x0100, 24).unwrap(), i),
                    (Prefix::new(chunk | (i % 7) << 12, 20).unwrap(), i + 1),
                ]
            }))
            .collect();
        let mut t = build(&table);
        let changed: Vec<Prefix<u32>> = (0..600u32)
            .step_by(97)
            .map(|i| Prefix::new((0x1400_0000 + i * 0x0007_0000) | 0x8000, 17).unwrap())
            .collect();
        for &p in &changed {
            table.insert(p, 4242);
            t = PlanB::from_parts(t.partial_parts(&table, &[p]).unwrap(), Backend::Scalar).unwrap();
        }
        let home = t
            .tree()
            .home_chunk()
            .expect("one segment holds nearly all lines");
        assert!(t.tree().segments().len() > 2);
        let home_seg = t.tree().chunk(home).0;
        for p in &changed {
            let chunk = chunk_of::<u32>(p.first().coarse());
            assert_ne!(t.tree().chunk(chunk).0, home_seg, "{p} is elsewhere");
        }
        let probes = probes(&table);
        for backend in Backend::available() {
            t.set_backend(backend).unwrap();
            agrees(&t, &table, &probes);
        }

        // Rebuilt chunks with a fifth of the lines: the lanes carry their own segments' lines.
        let more: Vec<Prefix<u32>> = (0..600u32)
            .step_by(3)
            .map(|i| Prefix::new((0x1400_0000 + i * 0x0007_0000) | 0x4000, 18).unwrap())
            .collect();
        for chunk in more.chunks(25) {
            for &p in chunk {
                table.insert(p, 77);
            }
            t = PlanB::from_parts(t.partial_parts(&table, chunk).unwrap(), Backend::Scalar)
                .unwrap();
        }
        assert!(t.tree().segments().len() > 2);
        assert_eq!(
            t.tree().home_chunk(),
            None,
            "no segment holds nearly all lines"
        );
        for backend in Backend::available() {
            t.set_backend(backend).unwrap();
            agrees(&t, &table, &probes);
        }
    }

    #[test]
    fn a_new_segment_answers_its_fallback_cells_in_every_walk() {
        // /64s finer than the coarse /48 cells make fallback cells; a change in their chunk
        // moves the chunk's tree and cells to a new segment, where the multi-segment walks
        // (single and batched, every backend) must find both.
        let base = 0x2001_0db8u128 << 96;
        let mut table: RouteTable<u128> = (0..40u128)
            .map(|i| (Prefix::new(base | (i << 64), 64).unwrap(), i as NextHop))
            .chain([
                (Prefix::new(base, 32).unwrap(), 99),
                (Prefix::new(0x2a00u128 << 112, 16).unwrap(), 5),
            ])
            .collect();
        let old = PlanB::build(&table, &BuildOptions::with_backend(Backend::Scalar)).unwrap();
        let p = Prefix::new(base | (7 << 64) | (1 << 60), 68).unwrap();
        table.insert(p, 1234);
        let probes: Vec<u128> = table
            .iter()
            .flat_map(|(q, _)| [q.first(), q.last(), q.first().wrapping_sub(1), q.last() + 1])
            .chain((0..100u128).map(|i| base | (i << 62) | i))
            .collect();
        let intervals = Intervals::from_table(&table);
        let want: Vec<Option<NextHop>> = probes.iter().map(|&a| intervals.lookup(a)).collect();
        for backend in Backend::available() {
            let new = PlanB::from_parts(old.partial_parts(&table, &[p]).unwrap(), backend).unwrap();
            assert_eq!(new.tree().segments().len(), 2, "{backend:?}");
            assert!(new.tree().cells() > 0, "the table has fallback cells");
            let single: Vec<Option<NextHop>> = probes.iter().map(|&a| new.lookup(a)).collect();
            assert_eq!(single, want, "{backend:?} single");
            let mut batch = vec![None; probes.len()];
            new.lookup_batch(&probes, &mut batch).unwrap();
            assert_eq!(batch, want, "{backend:?} batch");
            new.validate().unwrap();
        }
    }

    #[test]
    fn compaction_steps_reclaim_the_dead_lines_of_replaced_chunks() {
        let mut table: RouteTable<u32> = (0..2000u32)
            .map(|i| (Prefix::new(0x0a00_0000 | (i << 12), 20).unwrap(), i))
            .collect();
        let mut t = build(&table);
        let full = t.lines();
        for i in 0..50u32 {
            let p = Prefix::new(0x0a00_0000 | ((i * 40) << 12), 24).unwrap();
            table.insert(p, 7);
            t = PlanB::from_parts(t.partial_parts(&table, &[p]).unwrap(), Backend::Scalar).unwrap();
        }
        assert!(
            t.tree().segments().len() > 4 && t.lines() > full + full / 10,
            "fragmented"
        );
        // An interrupted step gives up at its first poll.
        assert!(t.compact_parts(64, &|| true).is_none());
        let mut steps = 0;
        while let Some(parts) = t.compact_parts(64, &|| false) {
            t = PlanB::from_parts(parts, Backend::Scalar).unwrap();
            steps += 1;
        }
        assert!(steps > 1, "bounded steps: {steps}");
        // Settling copies every tree into one segment: the one-segment walk again (unless
        // interrupted).
        assert!(t.merged_parts(true, &|| true).is_none());
        let merged =
            PlanB::from_parts(t.merged_parts(true, &|| false).unwrap(), Backend::Scalar).unwrap();
        assert_eq!(merged.tree().segments().len(), 1);
        assert!(
            merged.tree().pages().is_empty(),
            "one segment: flat entries again"
        );
        assert!(merged.merged_parts(true, &|| false).is_none());
        agrees(&merged, &table, &probes(&table));
        // Segments in use (emptied ones keep their numbers as placeholders).
        let used = t.tree().users().iter().filter(|&&u| u > 0).count();
        assert!(used <= MANY_SEGMENTS, "{used} segments in use");
        let rebuilt = build(&table);
        assert!(
            t.lines() <= rebuilt.lines() + rebuilt.lines() / 20 + 8,
            "{} lines after compaction, a full build has {}",
            t.lines(),
            rebuilt.lines()
        );
        agrees(&t, &table, &probes(&table));
    }

    #[test]
    fn wide_or_deepening_changes_decline() {
        let mut table: RouteTable<u32> = [(Prefix::new(0x0a00_0000, 24).unwrap(), 1)]
            .into_iter()
            .collect();
        let t = build(&table);
        let wide = Prefix::new(0, 1).unwrap();
        table.insert(wide, 2);
        assert!(t.partial_parts(&table, &[wide]).is_none(), "32,768 chunks");
        let deep: Vec<Prefix<u32>> = (0..200u32)
            .map(|i| Prefix::new(0x0b00_0000 | (i << 8), 24).unwrap())
            .collect();
        for (i, &p) in deep.iter().enumerate() {
            table.insert(p, i as u32);
        }
        assert_eq!(t.tree().depth(), 1);
        assert!(
            t.partial_parts(&table, &deep).is_none(),
            "the chunk needs depth 2"
        );
    }

    /// A narrow table declines a partial rebuild that brings a next hop past 16 bits (the full
    /// build then picks wide leaves), and takes one that does not.
    #[test]
    fn a_next_hop_too_wide_for_narrow_leaves_declines() {
        let mut table: RouteTable<u32> = (0..40u32)
            .map(|i| (Prefix::new(0x0a00_0000 | (i << 8), 24).unwrap(), i))
            .collect();
        let t = build(&table);
        assert!(t.tree().narrow() && t.tree().depth() == 2);
        let p = Prefix::new(0x0a00_0500, 24).unwrap();
        table.insert(p, u32::from(u16::MAX));
        let fits =
            PlanB::from_parts(t.partial_parts(&table, &[p]).unwrap(), Backend::Scalar).unwrap();
        agrees(&fits, &table, &probes(&table));
        table.insert(p, 1 << 16);
        assert!(t.partial_parts(&table, &[p]).is_none());
        let full = build(&table);
        assert!(!full.tree().narrow());
        agrees(&full, &table, &probes(&table));
    }

    /// Chunks entered at their leaf keep that mark through partial rebuilds, compaction steps
    /// and merging, and a chunk that grows past one leaf loses it.
    #[test]
    fn leaf_entries_survive_rebuilds_and_compaction() {
        // Chunk 0x0a00 needs inner nodes (so the table has depth 2); the others are one leaf.
        let mut table: RouteTable<u32> = (0..100u32)
            .map(|i| (Prefix::new(0x0a00_0000 | (i << 8), 24).unwrap(), i % 7))
            .chain((1..20u32).map(|c| (Prefix::new((0x0a00 + c) << 16, 20).unwrap(), c)))
            .collect();
        let mut t = build(&table);
        assert_eq!(t.tree().depth(), 2);
        assert!(t.tree().entry(0x0a05) & LEAF_ENTRY != 0, "a one-leaf chunk");
        assert!(
            t.tree().entry(0x0a00) & LEAF_ENTRY == 0,
            "a chunk with inner nodes"
        );
        for round in 0..30u32 {
            let c = 1 + round % 19;
            let changed: Vec<Prefix<u32>> = (0..=round % 20)
                .map(|k| Prefix::new(((0x0a00 + c) << 16) | (k << 8), 24).unwrap())
                .collect();
            for (k, &p) in changed.iter().enumerate() {
                table.insert(p, round + k as u32 % 3);
            }
            if let Some(parts) = t.partial_parts(&table, &changed) {
                t = PlanB::from_parts(parts, Backend::Scalar).unwrap();
            }
            if let Some(parts) = t.compact_parts(64, &|| false) {
                t = PlanB::from_parts(parts, Backend::Scalar).unwrap();
            }
            agrees(&t, &table, &probes(&table));
        }
        assert!(
            t.tree().entry(0x0a01) & LEAF_ENTRY == 0,
            "grew past one leaf"
        );
        assert!(
            t.tree().entry(0x0a02) & LEAF_ENTRY != 0,
            "rebuilt, still one leaf"
        );
        if let Some(parts) = t.merged_parts(true, &|| false) {
            t = PlanB::from_parts(parts, Backend::Scalar).unwrap();
        }
        agrees(&t, &table, &probes(&table));
    }

    #[test]
    fn ipv6_fallback_cells_move_with_their_chunk() {
        let mut table: RouteTable<u128> = (0..100u128)
            .map(|i| {
                (
                    Prefix::new((0x2001_0db8 << 96) | (i << 80), 48).unwrap(),
                    i as u32,
                )
            })
            .collect();
        let t = PlanB::build(&table, &BuildOptions::with_backend(Backend::Scalar)).unwrap();
        let p = Prefix::new((0x2001_0db8_0005 << 80) | (9 << 64), 64).unwrap();
        table.insert(p, 999);
        let new =
            PlanB::from_parts(t.partial_parts(&table, &[p]).unwrap(), Backend::Scalar).unwrap();
        assert_eq!(new.tree().segment(1).fallback.cells(), 1);
        let intervals = Intervals::from_table(&table);
        for a in [
            p.first(),
            p.last(),
            p.first() - 1,
            p.last() + 1,
            (0x2001_0db8_0063 << 80),
        ] {
            assert_eq!(new.lookup(a), intervals.lookup(a), "address {a:#x}");
        }
        new.validate().unwrap();
    }

    /// In a live table a chunk with fallback cells is appended to the home segment like any
    /// other: its cells join the home segment's, renumbered past them (here past a cell of
    /// another chunk, then past dead ones too), the table keeps flat entries and one segment,
    /// and the version before keeps its own cells. In both leaf formats (next hops below 2^16
    /// make narrow leaves).
    #[test]
    fn ipv6_fallback_cells_join_the_home_segments_cells() {
        for hop_base in [0u32, 100_000] {
            fallback_cells_join_the_home_segments_cells(hop_base);
        }
    }

    fn fallback_cells_join_the_home_segments_cells(hop_base: u32) {
        let db8 = 0x2001_0db8u128 << 96;
        let a00 = 0x2a00u128 << 112;
        let q7 = Prefix::new(db8 | (7 << 80) | (1 << 64), 64).unwrap();
        let mut table: RouteTable<u128> = (0..100u128)
            .map(|i| {
                (
                    Prefix::new(db8 | (i << 80), 48).unwrap(),
                    hop_base + i as u32,
                )
            })
            .chain([
                (Prefix::new(a00 | (3 << 64), 64).unwrap(), hop_base + 500),
                (q7, hop_base + 501),
            ])
            .collect();
        let old = PlanB::build(&table, &live_options(Backend::Scalar)).unwrap();
        assert_eq!(old.tree().narrow(), hop_base == 0, "leaf format");
        let home_cells = old.tree().segment(0).fallback.cells();
        assert_eq!(home_cells, 2, "a cell in each chunk");
        let before = table.clone();
        let p = Prefix::new(db8 | (5 << 80) | (9 << 64), 64).unwrap();
        table.insert(p, hop_base + 999);
        let mut new =
            PlanB::from_parts(old.partial_parts(&table, &[p]).unwrap(), Backend::Scalar).unwrap();
        assert_eq!(
            new.tree().segments().len(),
            1,
            "appended to the home segment"
        );
        assert!(new.tree().pages().is_empty(), "flat entries");
        // The rebuilt chunk's two cells follow the two there were (one of them now dead).
        assert_eq!(new.tree().segment(0).fallback.cells(), home_cells + 2);
        assert_eq!(old.tree().segment(0).fallback.cells(), home_cells);
        let probes: Vec<u128> = table
            .iter()
            .flat_map(|(q, _)| [q.first(), q.last(), q.first().wrapping_sub(1), q.last() + 1])
            .chain((0..100u128).map(|i| db8 | (i << 78) | i))
            .collect();
        for backend in Backend::available() {
            new.set_backend(backend).unwrap();
            agrees(&new, &table, &probes);
        }
        agrees(&old, &before, &probes);
        // Changed again, with the other cell's route given a new next hop, so that a cell
        // number renumbered wrongly onto an earlier copy of that cell answers the old hop.
        let with_p = table.clone();
        table.remove(p);
        table.insert(q7, hop_base + 502);
        let newer = PlanB::from_parts(
            new.partial_parts(&table, &[p, q7]).unwrap(),
            Backend::Scalar,
        )
        .unwrap();
        assert_eq!(newer.tree().segments().len(), 1);
        assert!(newer.tree().segment(0).fallback.cells() > home_cells + 2);
        assert_eq!(new.tree().segment(0).fallback.cells(), home_cells + 2);
        agrees(&newer, &table, &probes);
        agrees(&new, &with_p, &probes);
    }

    /// Any address, or one of few in four chunks (two bits set per byte below the chunk), so
    /// that changed routes nest inside each other's chunks as well as spread out.
    fn v4_address() -> impl Strategy<Value = u32> {
        prop_oneof![
            any::<u32>(),
            (0u32..4, any::<u16>())
                .prop_map(|(c, low)| ((0x0a00 + c) << 16) | u32::from(low & 0xc0c0)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Any sequence of changes applied by partial rebuilds (a full build whenever one
        /// declines) answers like the reference, whether they append to a home segment with
        /// room (a live table's) or add segments.
        #[test]
        fn partial_rebuilds_agree_with_the_intervals(
            base in proptest::collection::vec((v4_address(), 8u8..=32, 0u32..50), 0..60),
            steps in proptest::collection::vec(
                proptest::collection::vec((v4_address(), 4u8..=32, 0u32..50, any::<bool>()), 1..6),
                1..5,
            ),
            room in any::<bool>(),
        ) {
            let build = if room { build_live } else { build };
            let mut table: RouteTable<u32> = base
                .iter()
                .map(|&(a, l, h)| (Prefix::covering(a, l), h))
                .collect();
            let mut t = build(&table);
            for step in steps {
                let before = table.clone();
                let mut changed = Vec::new();
                for (a, l, h, insert) in step {
                    // Removals pick an existing route when there is one.
                    let p = match table.iter().nth(a as usize % (table.len() + 1)) {
                        Some((q, _)) if !insert => q,
                        _ => Prefix::covering(a, l),
                    };
                    if insert {
                        table.insert(p, h);
                    } else {
                        table.remove(p);
                    }
                    changed.push(p);
                }
                let old = t.clone();
                t = match t.partial_parts(&table, &changed) {
                    Some(parts) => PlanB::from_parts(parts, Backend::Scalar).unwrap(),
                    None => build(&table),
                };
                agrees(&t, &table, &probes(&table));
                // The version before still answers its own routes (an append wrote past its
                // lines, never into them).
                agrees(&old, &before, &probes(&table));
            }
            // Compaction steps (a small budget, so it may take several) end compact and agree.
            let mut steps = 0;
            while let Some(parts) = t.compact_parts(256, &|| false) {
                t = PlanB::from_parts(parts, Backend::Scalar).unwrap();
                steps += 1;
                prop_assert!(steps < 10_000, "compaction ends");
            }
            agrees(&t, &table, &probes(&table));
            // Settling: one segment with flat entries again.
            if let Some(parts) = t.merged_parts(true, &|| false) {
                t = PlanB::from_parts(parts, Backend::Scalar).unwrap();
                prop_assert!(t.tree().pages().is_empty());
            }
            agrees(&t, &table, &probes(&table));
        }

        /// The same for IPv6 routes packed into a few chunks and /48 cells, so trees, cells
        /// and their copies are all exercised.
        #[test]
        fn partial_rebuilds_agree_for_ipv6(
            base in proptest::collection::vec((0u128..4, any::<u16>(), any::<u64>(), 14u8..=128, 0u32..50), 0..60),
            steps in proptest::collection::vec(
                proptest::collection::vec((0u128..4, any::<u16>(), any::<u64>(), 12u8..=128, 0u32..50, any::<bool>()), 1..6),
                1..5,
            ),
            room in any::<bool>(),
        ) {
            // Chunk 0x2001 + (0..4), /48 cells from a small set, any low bits.
            let addr = |c: u128, cell: u16, low: u64| {
                ((0x2001 + c) << 112) | (u128::from(cell % 8) << 80) | (u128::from(low) << 16)
            };
            let mut table: RouteTable<u128> = base
                .iter()
                .map(|&(c, cell, low, l, h)| (Prefix::covering(addr(c, cell, low), l), h))
                .collect();
            let opts = if room {
                live_options(Backend::Scalar)
            } else {
                BuildOptions::with_backend(Backend::Scalar)
            };
            let mut t = PlanB::build(&table, &opts).unwrap();
            for step in steps {
                let before = table.clone();
                let mut changed = Vec::new();
                for (c, cell, low, l, h, insert) in step {
                    let p = match table.iter().nth(low as usize % (table.len() + 1)) {
                        Some((q, _)) if !insert => q,
                        _ => Prefix::covering(addr(c, cell, low), l),
                    };
                    if insert {
                        table.insert(p, h);
                    } else {
                        table.remove(p);
                    }
                    changed.push(p);
                }
                let old = t.clone();
                t = match t.partial_parts(&table, &changed) {
                    Some(parts) => PlanB::from_parts(parts, Backend::Scalar).unwrap(),
                    None => PlanB::build(&table, &opts).unwrap(),
                };
                // The new version answers its routes, single and batched, and the version
                // before still answers its own (an append wrote past its lines and cells).
                let probes: Vec<u128> = table
                    .iter()
                    .chain(before.iter())
                    .flat_map(|(p, _)| {
                        [p.first(), p.last(), p.first().wrapping_sub(1), p.last().wrapping_add(1)]
                    })
                    .collect();
                agrees(&t, &table, &probes);
                agrees(&old, &before, &probes);
            }
        }
    }
}
