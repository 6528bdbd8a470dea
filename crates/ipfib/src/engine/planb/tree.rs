//! The built tree: the direct table (flat with one segment; with several, `pages`, whose
//! slots also say each chunk's segment), the segments (lines and fallback cells) and what is
//! counted about them, owned in one place, with the one API that reads them back (the walk,
//! partial rebuilds, the validator, saved tables, the lines model, the staged tables and the
//! statistics) and the one that derives a new tree from this one (partial rebuilds and
//! compaction: chunks' trees replaced by ones in a new segment, segments no chunk uses any
//! more left as empty placeholders).
//!
//! The readers the lookup walks use (`flat_direct`, `pages`, `segments`, `home`, `depth`,
//! `narrow`) are `#[inline(always)]` and return the fields' slices or copies, so a walk
//! compiles to the loads it made when it read the fields.

use std::borrow::Cow;
use std::sync::Arc;

use super::builder::SegmentBuilder;
use super::layout::{entry_line, Family, Key, DIRECT_BITS, LEAF_ENTRY};
use super::line::Segment;
use super::pages::Pages;
use crate::storage::Array;

/// The lines of one family's table (`PlanB`'s tree), and the counts kept with them.
#[derive(Clone, Debug)]
pub(super) struct Tree<A: Family> {
    /// With one segment: entry node of each top-16-bit chunk's tree (an inner node, or its
    /// leaf when `depth` is 1). Owned, or in place in a saved table's file. Empty when paged:
    /// the entries are in `pages`.
    direct: Array<u32>,
    /// A live table between settling merges (several segments, or partial rebuilds appended
    /// to its one): each chunk's entry and segment in one slot, in pages shared with other
    /// versions. Empty with flat entries (`direct`).
    pages: Pages,
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
    /// emptied without a pass over the 2^16 chunks. A segment no chunk uses is an empty
    /// placeholder (segments keep their numbers, so that emptying one rewrites no page), and
    /// the next new segment takes its number.
    users: Vec<u32>,
    /// When paged: a chunk of the segment that holds all but at most 1/[`HOME_SHARE`] of the
    /// used lines, if one does (`None` with flat entries). The batched
    /// walk then walks every lane through that segment's lines (one base for all lanes, as a
    /// one-segment walk) and looks up again, one at a time, the lanes whose chunk is
    /// elsewhere (`walk::enter`).
    home_chunk: Option<usize>,
}

/// The batched walk of a tree with several segments goes through one home segment when it
/// holds all but 1/`HOME_SHARE` of the used lines (a live table between compactions: its
/// last full build or settled compaction, with a few rebuilt chunks elsewhere). Each lane
/// whose chunk is elsewhere costs a second, single lookup, so past that share the walk that
/// carries each lane's own lines is the better one.
const HOME_SHARE: usize = 32;

/// The arrays a tree is made of, as the builder, a partial rebuild, a compaction step or a
/// saved table hands them over.
pub(super) struct Parts<A: Family> {
    direct: Array<u32>,
    pages: Pages,
    segments: Vec<Arc<Segment<A>>>,
    depth: usize,
    narrow: bool,
    intervals: Option<usize>,
    results: Option<usize>,
    /// Used lines per segment (`Tree::live`); `None` when every line is (a full build).
    live: Option<Vec<usize>>,
    /// Chunks per segment (`Tree::users`); `None`: count them from the pages.
    users: Option<Vec<u32>>,
    /// Whether the table makes staged tables (when its structure takes them): not after a
    /// partial rebuild that appended to its segment, whose publish would pay for the choice
    /// of sub-tables (work proportional to the table) where the paged tables it replaces
    /// had none; the next settling merge makes them (`PlanB::compact`).
    pub(super) stage: bool,
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
            pages: Pages::default(),
            segments: vec![Arc::new(segment)],
            depth,
            narrow,
            intervals: Some(intervals),
            results: Some(results),
            live: None,
            users: None,
            stage: true,
        }
    }

    /// A saved table's parts (unchecked: the caller validates the tree): nothing is known dead
    /// in a file, so every line counts as used until compaction finds out otherwise, and the
    /// chunks per segment are counted from the chunks' slots ([`Tree::count_users`]).
    /// `segment_of` (one segment per chunk, or empty: all in segment 0) must be empty or as
    /// long as `direct`, with an entry per chunk. `None` when a tree of several segments has
    /// an entry or a segment number that does not fit a page's slot (`pages::pack`), which no
    /// saved live table has.
    pub(super) fn saved(
        direct: Array<u32>,
        segment_of: &[u16],
        segments: Vec<Arc<Segment<A>>>,
        depth: usize,
        narrow: bool,
        intervals: Option<usize>,
        results: Option<usize>,
    ) -> Option<Self> {
        let (direct, pages) = if segment_of.is_empty() {
            (direct, Pages::default())
        } else {
            (Vec::new().into(), Pages::from_flat(&direct, segment_of)?)
        };
        Some(Parts {
            direct,
            pages,
            segments,
            depth,
            narrow,
            intervals,
            results,
            live: None,
            users: None,
            stage: true,
        })
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

impl<A: Family> Tree<A> {
    /// The tree of `p`, its uncounted counts counted. Panics if `p` has no segment.
    pub(super) fn from_parts(p: Parts<A>) -> Self {
        assert!(!p.segments.is_empty(), "a tree has a segment");
        let live = p
            .live
            .unwrap_or_else(|| p.segments.iter().map(|s| s.lines.len()).collect());
        let mut tree = Tree {
            direct: p.direct,
            pages: p.pages,
            lines: p.segments.iter().map(|s| s.lines.clone()).collect(),
            segments: p.segments,
            depth: p.depth,
            narrow: p.narrow,
            intervals: p.intervals,
            results: p.results,
            live,
            users: Vec::new(),
            home_chunk: None,
        };
        tree.users = p.users.unwrap_or_else(|| tree.count_users());
        tree.home_chunk = tree.find_home();
        tree
    }

    /// [`Tree::home_chunk`]: with paged entries, the first chunk of the segment with the
    /// most used lines when it holds all but 1/[`HOME_SHARE`] of them.
    fn find_home(&self) -> Option<usize> {
        if self.pages.is_empty() {
            return None;
        }
        let total: usize = self.live.iter().sum();
        let (home, &lines) = self.live.iter().enumerate().max_by_key(|&(_, l)| *l)?;
        // One pass over the slots at most, ending at the home segment's first chunk: chunk 0
        // when it is the last full build's segment and chunk 0 was not rebuilt since, later
        // when a rebuilt segment holds most lines (an IPv6 table with its routes in a few
        // chunks).
        (lines >= total - total / HOME_SHARE)
            .then(|| self.chunks().position(|(seg, _)| seg == home))
            .flatten()
    }

    /// With paged entries, a chunk of the segment the batched walk walks every lane through,
    /// if one holds all but a small share of the used lines ([`HOME_SHARE`]).
    #[inline(always)]
    pub(super) fn home_chunk(&self) -> Option<usize> {
        self.home_chunk
    }

    /// Chunks per segment, counted from the entries (numbers out of range are not counted:
    /// validation rejects them).
    pub(super) fn count_users(&self) -> Vec<u32> {
        let mut users = vec![0u32; self.segments.len()];
        for (seg, _) in self.chunks() {
            if let Some(u) = users.get_mut(seg) {
                *u += 1;
            }
        }
        users
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

    /// The direct table of a one-segment tree: each chunk's entry (its tree's entry line,
    /// maybe [`LEAF_ENTRY`]). Empty when paged ([`Tree::pages`]).
    #[inline(always)]
    pub(super) fn flat_direct(&self) -> &[u32] {
        &self.direct
    }

    /// Each chunk's entry and segment of a paged tree (empty with flat entries).
    #[inline(always)]
    pub(super) fn pages(&self) -> &Pages {
        &self.pages
    }

    /// The segment and direct entry of `chunk` (checked).
    #[inline(always)]
    pub(super) fn chunk(&self, chunk: usize) -> (usize, u32) {
        if self.pages.is_empty() {
            (0, self.direct[chunk])
        } else {
            self.pages.chunk(chunk)
        }
    }

    /// The direct entry of `chunk` (checked).
    #[inline(always)]
    pub(super) fn entry(&self, chunk: usize) -> u32 {
        self.chunk(chunk).1
    }

    /// Every chunk's segment and direct entry, in chunk order.
    pub(super) fn chunks(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        // One of the two is empty (flat with one segment, paged with several).
        let flat = self.direct.iter().map(|&entry| (0, entry));
        flat.chain(self.pages.chunks())
    }

    /// Every chunk's direct entry, in chunk order.
    pub(super) fn entries(&self) -> Cow<'_, [u32]> {
        if self.pages.is_empty() {
            Cow::Borrowed(&self.direct)
        } else {
            Cow::Owned(self.pages.entries())
        }
    }

    /// Every chunk's segment, in chunk order (empty with one segment).
    pub(super) fn segment_table(&self) -> Vec<u16> {
        self.pages.segments()
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

    /// Bytes of the direct table (with several segments, the pages: each chunk's segment is
    /// in its entry's slot).
    pub(super) fn direct_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.direct) + self.pages.bytes()
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
        let (seg, direct) = self.chunk(chunk);
        let lines = &self.segments[seg].lines;
        let entry = entry_line(direct) as usize;
        let (mut first, mut last) = (entry, entry);
        if direct & LEAF_ENTRY != 0 {
            return (seg, entry, first, last);
        }
        for _ in 1..self.depth {
            first = A::Key::link(&lines[first]) as usize;
            let l = &lines[last];
            last = A::Key::link(l) as usize + A::Key::keys_in(l, A::Key::INNER_KEYS);
        }
        (seg, entry, first, last)
    }

    /// The used lines and chunks per segment once `chunks` leave their trees: the moved
    /// chunks' old lines are dead (a one-answer chain may still serve other chunks: it stays
    /// counted), and their old segments have one user fewer each.
    fn without(&self, chunks: &[usize]) -> (Vec<usize>, Vec<u32>) {
        if chunks.len() == 1 << DIRECT_BITS {
            // Every chunk leaves (a merge): no line stays used. Walking each chunk's tree
            // (`span`) to find that was a sixth of a merge of dfz10.
            return (vec![0; self.live.len()], vec![0; self.users.len()]);
        }
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
        (live, users)
    }

    /// This tree with `chunks` (ascending) entered at `entries` of the new `segment`, every
    /// other chunk shared (and every page of entries no such chunk is in). The new segment
    /// takes the number of the first segment no chunk uses any more, so no other chunk's
    /// segment number changes; segments emptied become empty placeholders (trailing ones are
    /// dropped), and a tree left with one used segment is made a one-segment tree again.
    /// `None` when the tree stays paged and an entry or the new segment's number does not fit
    /// a page's slot (`pages::pack`; the caller's full build takes any size). With `room`,
    /// later partial rebuilds can append to the new segment ([`Segment::with_room`]).
    pub(super) fn with_chunks_in(
        &self,
        chunks: &[usize],
        entries: &[u32],
        segment: SegmentBuilder<A>,
        room: bool,
    ) -> Option<Parts<A>> {
        let (mut live, mut users) = self.without(chunks);
        let mut segments = self.segments.clone();
        let fresh = users.iter().position(|&u| u == 0).unwrap_or(users.len());
        let added = Arc::new(if room {
            Segment::with_room(segment.lines, segment.fallback)
        } else {
            Segment::new(segment.lines.into(), segment.fallback)
        });
        if fresh == segments.len() {
            segments.push(added);
            live.push(0);
            users.push(0);
        } else {
            segments[fresh] = added;
        }
        live[fresh] = segments[fresh].lines.len();
        users[fresh] = chunks.len() as u32;
        retire_unused(&mut segments, &mut live, &mut users);

        let used: Vec<usize> = (0..users.len()).filter(|&s| users[s] > 0).collect();
        let (direct, pages) = if let [only] = used[..] {
            // One used segment: it becomes segment 0 of a one-segment tree (the entries are
            // lines of it, whatever its number was).
            segments = vec![segments.swap_remove(only)];
            live = vec![live[only]];
            users = vec![users[only]];
            let mut direct = self.entries().into_owned();
            for (&chunk, &entry) in chunks.iter().zip(entries) {
                direct[chunk] = entry;
            }
            (direct.into(), Pages::default())
        } else {
            (Vec::new().into(), self.paged_with(chunks, entries, fresh)?)
        };
        Some(self.derived(direct, pages, segments, live, users))
    }

    /// The segment partial rebuilds append to: the one made with room
    /// ([`Segment::with_room`]: the last full build's or settling merge's), while a chunk
    /// uses it.
    pub(super) fn appendable(&self) -> Option<usize> {
        (0..self.segments.len()).find(|&s| self.segments[s].has_arena() && self.users[s] > 0)
    }

    /// Lines partial rebuilds can still append to the [`Tree::appendable`] segment (0
    /// without one).
    pub(super) fn room(&self) -> usize {
        self.appendable().map_or(0, |s| self.segments[s].room())
    }

    /// Whether the [`Tree::appendable`] segment is nearly full: less room than an eighth of
    /// its lines. A compaction step then merges every chunk into a new segment with room.
    pub(super) fn room_spent(&self) -> bool {
        self.appendable()
            .is_some_and(|s| self.segments[s].room() < self.segments[s].lines.len() / 8)
    }

    /// This tree with `chunks` (ascending) entered at `entries` of `segment`'s lines, which
    /// are appended to the [`Tree::appendable`] segment in place, so that the rebuilt chunks
    /// keep the base address of the chunks around them. With every chunk there the tree has
    /// flat entries and one segment (the one-segment walk); with chunks elsewhere it stays
    /// paged, and the batched walk goes through this segment as its home
    /// ([`Tree::home_chunk`]). `segment`'s fallback cells follow that segment's, renumbered.
    /// `None`, with nothing appended, when there is no such segment, the lines, entries or
    /// cells do not fit, or the segment has no room or was appended to by another version
    /// derived from this one; the caller then puts the chunks in a new segment
    /// ([`Tree::with_chunks_in`]).
    pub(super) fn with_chunks_appended(
        &self,
        chunks: &[usize],
        entries: &[u32],
        segment: &SegmentBuilder<A>,
    ) -> Option<Parts<A>> {
        let home = self.appendable()?;
        if segment.lines.len() > self.segments[home].room() {
            return None;
        }
        let base = self.segments[home].lines.len();
        let cells = self.segments[home].fallback.cells();
        let (lines, entries) = segment.relocated(base, cells, entries)?;
        let (mut live, mut users) = self.without(chunks);
        live[home] += lines.len();
        users[home] += chunks.len() as u32;
        // Every chunk in the home segment: flat entries, so the walk is the one-segment walk.
        // A publish then copies all 2^16 entries (256 KiB) where pages copy the 4 KiB pages
        // its chunks are in, and readers on other cores refill them, yet with one base for
        // every lane they kept 95-104 % of their quiet rate through a feed of 100 and 1,000
        // updates a second, where paged entries over the same appended lines kept 64-67 %
        // (`examples/live_feed`, et120k, Intel Xeon Ice Lake, BENCHMARKS.md "Session 39").
        let flat = home == 0 && users[home] as usize == 1 << DIRECT_BITS;
        let (direct, pages) = if flat {
            let mut direct = self.entries().into_owned();
            for (&chunk, &entry) in chunks.iter().zip(&entries) {
                direct[chunk] = entry;
            }
            (direct.into(), Pages::default())
        } else {
            (Vec::new().into(), self.paged_with(chunks, &entries, home)?)
        };
        let appended = self.segments[home].append(&lines, &segment.fallback)?;
        let mut segments = self.segments.clone();
        segments[home] = Arc::new(appended);
        retire_unused(&mut segments, &mut live, &mut users);
        Some(Parts {
            stage: false,
            ..self.derived(direct, pages, segments, live, users)
        })
    }

    /// The pages of entries with `chunks` entered at `entries` of segment `seg`, the others
    /// shared; `None` when one does not fit a slot.
    fn paged_with(&self, chunks: &[usize], entries: &[u32], seg: usize) -> Option<Pages> {
        let mut pages = if self.pages.is_empty() {
            Pages::from_flat(&self.direct, &[])?
        } else {
            self.pages.clone()
        };
        let seg = u16::try_from(seg).ok()?;
        for (&chunk, &entry) in chunks.iter().zip(entries) {
            pages.set(chunk, entry, seg)?;
        }
        Some(pages)
    }

    /// The parts of a tree derived from this one (same depth and format; the full build's
    /// counts unknown).
    fn derived(
        &self,
        direct: Array<u32>,
        pages: Pages,
        segments: Vec<Arc<Segment<A>>>,
        live: Vec<usize>,
        users: Vec<u32>,
    ) -> Parts<A> {
        Parts {
            direct,
            pages,
            segments,
            depth: self.depth,
            narrow: self.narrow,
            intervals: None,
            results: None,
            live: Some(live),
            users: Some(users),
            stage: true,
        }
    }
}

/// Segments no chunk uses become empty placeholders (their numbers stay, so no page is
/// rewritten), and trailing ones are dropped.
fn retire_unused<A: Family>(
    segments: &mut Vec<Arc<Segment<A>>>,
    live: &mut Vec<usize>,
    users: &mut Vec<u32>,
) {
    for (s, seg) in segments.iter_mut().enumerate() {
        if users[s] == 0 && !seg.is_empty() {
            *seg = Arc::new(Segment::empty());
            live[s] = 0;
        }
    }
    while users.len() > 1 && users.last() == Some(&0) {
        segments.pop();
        live.pop();
        users.pop();
    }
}

/// Edits that break the tree, for the validator's tests (nothing else changes a built tree).
#[cfg(test)]
impl<A: Family> Tree<A> {
    pub(super) fn set_direct(&mut self, direct: Array<u32>) {
        self.direct = direct;
    }

    /// Moves the entries into pages, with `segment_of` as the chunks' segments.
    pub(super) fn set_pages(&mut self, segment_of: &[u16]) {
        self.pages = Pages::from_flat(&self.direct, segment_of).expect("entries fit slots");
        self.direct = Vec::new().into();
    }

    /// Puts `chunk` in segment `seg` (pages only).
    pub(super) fn set_segment_of_chunk(&mut self, chunk: usize, seg: u16) {
        let (_, entry) = self.pages.chunk(chunk);
        self.pages
            .set(chunk, entry, seg)
            .expect("segment numbers below MAX_SEGMENTS");
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

    pub(super) fn set_users(&mut self, users: Vec<u32>) {
        self.users = users;
    }
}
