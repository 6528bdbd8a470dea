//! The lookup walk, written once for every family and node-search backend.
//!
//! A walk is: direct table → the chunk's tree (its segment and entry node) → `depth - 1`
//! inner steps of `node = link + rank` in that segment → a leaf search whose rank picks the
//! answer in the same line. In a table of depth 2 a chunk's entry may be its leaf itself
//! ([`entry_step`]). The batched walk runs `LANES` independent lookups level by level, so the cache misses of
//! different lanes overlap instead of queueing behind each other (PlanB §3.4), and every lane
//! does the same steps (no per-lane branches except the rare fallback cell). Groups are also
//! software-pipelined: in each round one group enters, every group in flight takes one step,
//! and the oldest searches its leaf; each step prefetches the line the group needs next, so
//! that line has a whole round of other groups' work to arrive. The deep levels (the last
//! inner level and the leaves) are where lookups miss L1, and the prefetch distance of a round
//! hides most of those misses.
//!
//! Every function that walks is `unsafe`: the SIMD backends index without bounds checks, which
//! is sound only on a structure that satisfies PlanB's invariants (checked by
//! [`super::validate`]; every `PlanB` value does). The one exception is the checked scalar
//! descent [`PlanB::descend`] of the code that walks outside a lookup.

use std::mem::MaybeUninit;

use super::layout::{chunk_of, entry_line, Family, Key, LEAF_ENTRY};
use super::line::Segment;
use super::pages::{place, segment_field, unpack, SEGMENT_FIELD};
use super::search::scalar::Scalar;
use super::search::Search;
use super::tree::Tree;
use super::PlanB;
use crate::addr::AddressInput;
use crate::route_table::NextHop;
use crate::storage::Array;

/// What a batch writes per address: an `Option` (no route = `None`) or a plain next hop with
/// the caller's "no route" value, so C and NumPy callers get their layout without a second pass.
pub trait Output: Copy {
    /// The output for an answer, `miss` standing for "no route" where the type needs one.
    fn from_answer(answer: Option<NextHop>, miss: NextHop) -> Self;

    /// The output for a leaf's hop slot and its "no route" flag: a select on the flag.
    fn from_leaf(hop: NextHop, no_route: bool, miss: NextHop) -> Self;
}

impl Output for Option<NextHop> {
    #[inline(always)]
    fn from_answer(answer: Option<NextHop>, _miss: NextHop) -> Self {
        answer
    }

    #[inline(always)]
    fn from_leaf(hop: NextHop, no_route: bool, _miss: NextHop) -> Self {
        (!no_route).then_some(hop)
    }
}

impl Output for NextHop {
    #[inline(always)]
    fn from_answer(answer: Option<NextHop>, miss: NextHop) -> Self {
        answer.unwrap_or(miss)
    }

    #[inline(always)]
    fn from_leaf(hop: NextHop, no_route: bool, miss: NextHop) -> Self {
        if no_route {
            miss
        } else {
            hop
        }
    }
}

/// Lookups per group of the batched walk (chosen by measurement, see BENCHMARKS.md: with the
/// per-level pipeline, 32 beat 16 by 14 % on IPv4 tables and by 1–5 % on IPv6 ones).
pub const LANES: usize = 32;

/// The lines a walk reads, and in which segment. A table with one segment (every static
/// table, and a live table after compaction) is walked with `MULTI = false`: the segment's
/// lines (`home`) are found once per call and the per-chunk segment table is never read, so
/// sharing segments costs a static table nothing. A live table between settling merges is
/// walked with `MULTI = true`: its chunks' entries are in pages, and a lane's lines are those
/// of its chunk's segment. The batched walk either has every lane carry its segment's lines
/// ([`Group`] with `W = LANES`), or, when one home segment holds nearly all the lines
/// ([`Tree::home_chunk`]), walks every lane through `home` like a one-segment walk and looks
/// up the few lanes from other segments again ([`enter`], [`finish_group`]). A live table
/// whose partial rebuilds appended every chunk to its home segment has flat entries and one
/// segment (`partial`): the one-segment walk. `NARROW` is the
/// table's leaf format (`layout`), a constant so that reading an answer never tests it.
#[derive(Clone, Copy)]
pub(super) struct View<'t, A: Family, S, const MULTI: bool, const NARROW: bool> {
    pub(super) t: &'t Tree<A>,
    pub(super) s: S,
    /// The home segment's lines: segment 0's with one segment.
    pub(super) home: &'t [<A::Key as Key>::Line],
    /// The home segment's number, as a page's slot holds it (`pages::segment_field`), and
    /// the entry of one of its chunks: where a lane whose chunk is in another segment walks
    /// instead of its own tree (its answer is replaced).
    home_seg: u32,
    home_field: u32,
    stand_in: u32,
    /// Every segment's lines (read only with `MULTI`).
    all: &'t [Array<<A::Key as Key>::Line>],
}

impl<'t, A: Family, S: Search, const MULTI: bool, const NARROW: bool>
    View<'t, A, S, MULTI, NARROW>
{
    pub(super) fn new(t: &'t Tree<A>, s: S) -> Self {
        View {
            t,
            s,
            home: t.home(),
            home_seg: 0,
            home_field: 0,
            stand_in: 0,
            all: t.all_lines(),
        }
    }

    /// This view with the home segment of a paged tree ([`Tree::home_chunk`])
    /// as `home` (unchanged without one).
    fn with_home(self) -> Self {
        match self.t.home_chunk() {
            Some(chunk) => {
                let (seg, stand_in) = self.t.chunk(chunk);
                View {
                    home: &self.all[seg],
                    home_seg: seg as u32,
                    home_field: segment_field(seg as u32),
                    stand_in,
                    ..self
                }
            }
            None => self,
        }
    }

    /// The segment and entry node of the chunk of `coarse`.
    ///
    /// # Safety
    /// `t` satisfies the structure invariants.
    #[inline(always)]
    unsafe fn entry(self, coarse: u64) -> (u32, u32) {
        // SAFETY: with paged entries, caller's contract; with flat ones, a chunk index is below
        // 2^16 = `flat_direct().len()` (structure invariants).
        unsafe {
            if MULTI {
                unpack(self.slot(coarse))
            } else {
                (0, *self.s.at(self.t.flat_direct(), chunk_of::<A>(coarse)))
            }
        }
    }

    /// The slot of the chunk of `coarse` in a paged tree (`pages`): its segment
    /// and entry, packed.
    ///
    /// # Safety
    /// `t` satisfies the structure invariants and is paged.
    #[inline(always)]
    unsafe fn slot(self, coarse: u64) -> u32 {
        let (page, at) = place(chunk_of::<A>(coarse));
        // SAFETY: a chunk's page is below `pages().len()` and its place below a page's length
        // (structure invariants).
        unsafe {
            *self
                .s
                .at(&self.s.at(self.t.pages().pages(), page).slots, at)
        }
    }

    /// The lines of segment `seg`.
    ///
    /// # Safety
    /// `seg` is a segment of `t` (one [`View::entry`] gave).
    #[inline(always)]
    unsafe fn lines(self, seg: u32) -> &'t [<A::Key as Key>::Line] {
        if MULTI {
            // SAFETY: caller's contract (`all_lines` has one entry per segment).
            unsafe { self.s.at::<Array<_>>(self.all, seg as usize) }
        } else {
            self.home
        }
    }

    /// The segment `seg` itself (for its fallback cells).
    ///
    /// # Safety
    /// As for [`View::lines`].
    #[inline(always)]
    unsafe fn segment(self, seg: u32) -> &'t Segment<A> {
        // SAFETY: caller's contract.
        unsafe { self.s.at(self.t.segments(), seg as usize) }.as_ref()
    }
}

/// One inner step at inner node `n`: its link plus the rank of `x` in it.
#[inline(always)]
pub(super) fn step<A: Family, S: Search, const M: bool, const N: bool>(
    v: View<'_, A, S, M, N>,
    n: &<A::Key as Key>::Line,
    x: A::Key,
) -> u32 {
    // Wrapping: an inner node's sum never overflows (structure invariants), but a leaf read
    // as one by `entry_step` may, and that result is dropped.
    A::Key::link(n).wrapping_add(A::Key::rank_inner(v.s, n, x))
}

/// The inner step of a table of depth 2, from a lane's direct entry and its line `n`: as
/// [`step`], except that an entry marked [`LEAF_ENTRY`] names the chunk's only leaf, and the
/// lane stays there (its line is searched as an inner node and the result dropped: a select,
/// not a branch, so the lanes of a batch never diverge).
#[inline(always)]
fn entry_step<A: Family, S: Search, const M: bool, const N: bool>(
    v: View<'_, A, S, M, N>,
    n: &<A::Key as Key>::Line,
    entry: u32,
    x: A::Key,
) -> u32 {
    let next = step(v, n, x);
    if entry & LEAF_ENTRY != 0 {
        entry_line(entry)
    } else {
        next
    }
}

/// The leaf step: the answer at the rank of `x` in `leaf`, a leaf of the segment `seg` names
/// (asked only when the answer is a fallback cell).
///
/// # Safety
/// `v.t` satisfies the structure invariants, `leaf` is a leaf the walk of `addr` reached, and
/// `seg` gives its segment.
#[inline(always)]
pub(super) unsafe fn finish<A: Family, S: Search, O: Output, const M: bool, const N: bool>(
    v: View<'_, A, S, M, N>,
    leaf: &<A::Key as Key>::Line,
    seg: impl FnOnce() -> u32,
    x: A::Key,
    addr: A,
    miss: NextHop,
) -> O {
    let rank = A::Key::rank_leaf::<S, N>(v.s, leaf, x);
    // SAFETY: caller's contract.
    PlanB::<A>::answer::<O, N>(|| unsafe { v.segment(seg()) }, leaf, rank, addr, miss)
}

/// One lookup.
///
/// # Safety
/// `t` satisfies PlanB's structure invariants ([`super::validate`]).
#[inline(always)]
pub unsafe fn one<A: Family, S: Search>(t: &PlanB<A>, s: S, addr: A) -> Option<NextHop> {
    // SAFETY: caller's contract.
    unsafe {
        let t = t.tree();
        match (t.pages().is_empty(), t.narrow()) {
            (true, false) => one_in(View::<A, S, false, false>::new(t, s), addr),
            (true, true) => one_in(View::<A, S, false, true>::new(t, s), addr),
            (false, false) => one_in(View::<A, S, true, false>::new(t, s), addr),
            (false, true) => one_in(View::<A, S, true, true>::new(t, s), addr),
        }
    }
}

/// [`one`] with the portable search, kept out of line: inlined into the dispatching
/// `Lookup::lookup`, its register saves made every backend's call pay for them (a push and
/// a pop of three registers around the jump to the SIMD walk, about a tenth of a single
/// lookup), and out of line the dispatch is a bare jump whatever the backend.
///
/// # Safety
/// As for [`one`].
#[inline(never)]
pub unsafe fn one_portable<A: Family, S: Search>(t: &PlanB<A>, s: S, addr: A) -> Option<NextHop> {
    // SAFETY: caller's contract.
    unsafe { one(t, s, addr) }
}

/// One lookup through `v`.
///
/// # Safety
/// `v.t` satisfies the structure invariants, and `M` is true if it is paged.
#[inline(always)]
unsafe fn one_in<A: Family, S: Search, const M: bool, const N: bool>(
    v: View<'_, A, S, M, N>,
    addr: A,
) -> Option<NextHop> {
    let coarse = addr.coarse();
    let x = A::Key::from_coarse(coarse);
    // SAFETY: the entry names a chunk tree of `depth` searches in its segment, and every later
    // index is `link + rank` inside it (structure invariants).
    unsafe {
        let (seg, mut node) = v.entry(coarse);
        let lines = v.lines(seg);
        if v.t.depth() == 2 {
            // The line of a marked entry is a leaf, which may be read as any line.
            node = entry_step(v, v.s.at(lines, entry_line(node) as usize), node, x);
        } else {
            for _ in 1..v.t.depth() {
                node = step(v, v.s.at(lines, node as usize), x);
            }
        }
        finish(v, v.s.at(lines, node as usize), || seg, x, addr, 0)
    }
}

impl<A: Family> PlanB<A> {
    /// The node reached from inner node `node` of segment `segment` by `steps` inner steps
    /// (`node = link + rank`) for key `x`: the one definition of a scalar descent, safe
    /// (checked indexing, the portable search), for the code that walks outside a lookup: the
    /// leaf position ([`PlanB::leaf_position`]), the build of the staged sub-tables
    /// ([`super::staged`]) and the lines model ([`super::lines`]). The lookup walks keep their
    /// own unchecked [`step`], generic over the search backend.
    ///
    /// Panics if an index is out of bounds, which a structure that satisfies the invariants
    /// never gives for a node the walk reaches.
    pub(super) fn descend(&self, segment: usize, mut node: u32, x: A::Key, steps: usize) -> u32 {
        let lines = self.tree().lines_of(segment);
        for _ in 0..steps {
            let n = &lines[node as usize];
            node = A::Key::link(n) + A::Key::rank_inner(Scalar, n, x);
        }
        node
    }

    /// The leaf and the position in it that a walk reaches for the first address of coarse
    /// cell `coarse`, in a table of one segment and depth 3 or more (what
    /// [`super::staged::Staged::of`] asks).
    pub(super) fn leaf_position(&self, s: Scalar, coarse: u64) -> (u32, u32) {
        let x = A::Key::from_coarse(coarse);
        let tree = self.tree();
        let entry = tree.entry(chunk_of::<A>(coarse));
        let node = self.descend(0, entry, x, tree.depth().saturating_sub(1));
        let leaf = &tree.lines_of(0)[node as usize];
        (node, A::Key::rank_leaf_in(s, leaf, x, tree.narrow()))
    }
}

/// The walk state of one group of `LANES` lookups as it moves through the pipeline.
pub(super) struct Group<K: Key, const W: usize> {
    /// Each lane's key bits.
    pub(super) x: [K; LANES],
    /// Each lane's current node: its entry node, inner nodes, then its leaf.
    pub(super) node: [u32; LANES],
    /// Each lane's segment's lines (their first), in the walk of several segments that has
    /// no home segment ([`View`]): a lane finds them once, where it enters. Found at every
    /// step through the segment's `Arc`, a live table of 10 segments answered 64-address
    /// batches at 0.68x of a one-segment table's rate, and at 0.97x this way (IPv4 et-2015,
    /// `examples/live_walk`, medians of 15 processes, AMD EPYC Zen 4). `W` is `LANES` in such
    /// walks and 0 in others: one-segment walks carrying the array ran 0.95x (dfz10's staged
    /// batch).
    start: [MaybeUninit<*const K::Line>; W],
    /// Their lengths, for the bounds checks of debug builds.
    #[cfg(debug_assertions)]
    len: [u32; W],
    /// In a walk through a home segment, the lanes whose chunk is in another segment (bit `i`
    /// for lane `i`): they walk the home segment's stand-in tree, and their answers are
    /// looked up again.
    away: u32,
}

impl<K: Key, const W: usize> Group<K, W> {
    pub(super) fn new() -> Self {
        const {
            assert!(
                W == 0 || W == LANES,
                "lanes carry their lines, or none does"
            )
        };
        Group {
            x: [K::default(); LANES],
            node: [0; LANES],
            start: [MaybeUninit::uninit(); W],
            #[cfg(debug_assertions)]
            len: [0; W],
            away: 0,
        }
    }

    /// Line `node` of lane `i`'s segment: of `home` when lanes do not carry their lines
    /// (`W` is 0), else of the lines its entry set.
    ///
    /// # Safety
    /// `node` is below the length of those lines; with `W = LANES`, lane `i` has entered (so
    /// its `start` is a segment's lines, which live as long as `home`'s table).
    #[inline(always)]
    unsafe fn line<'t, S: Search>(
        &self,
        s: S,
        home: &'t [K::Line],
        i: usize,
        node: u32,
    ) -> &'t K::Line {
        if W == LANES {
            #[cfg(debug_assertions)]
            assert!(node < self.len[i], "line {node} of a lane's segment");
            // SAFETY: caller's contract.
            unsafe { &*self.start[i].assume_init().add(node as usize) }
        } else {
            // SAFETY: caller's contract.
            unsafe { s.at(home, node as usize) }
        }
    }
}

/// How many groups ahead the batched walk asks for its input addresses (non-temporally for
/// IPv4, as ordinary lines for IPv6: [`Family::INPUT_NTA`]). The hardware prefetcher would
/// stream them anyway, but a few rounds early. Measured on the first machine (`ipfib bench`,
/// 2 M addresses, alternating processes), non-temporal against none: et-2015 matched +3–5 %,
/// uniform +9 %, dfz10 matched +3 %, uniform +6–9 %, bart-tier1 matched +1–7 %; 8 groups ahead
/// was slower than none on et-2015 (the lines left L1 before use). On the third machine
/// 2 and 8 groups lost to 4 (et-2015 matched 0.92×, 0.88×), and for IPv6 ordinary
/// prefetches 4 groups ahead beat non-temporal ones by 1.18× (dfz10 matched) and 8 groups
/// ahead by 1.16×.
const INPUT_AHEAD: usize = 4;

/// Groups a pipelined batch keeps in flight at most: one per step of the deepest walk the
/// batched path takes (depth 6) and one entering.
pub(super) const IN_FLIGHT: usize = 8;

/// Pipeline stage 0: each lane's key bits, segment and entry node. In a walk of several
/// segments through a home segment (`M` and `W = 0`), a lane whose chunk is elsewhere takes
/// the home segment's stand-in entry instead and is marked for [`finish_group`].
///
/// # Safety
/// `v.t` satisfies the structure invariants.
#[inline(always)]
unsafe fn enter<
    A: Family,
    I: AddressInput<A>,
    S: Search,
    const M: bool,
    const N: bool,
    const W: usize,
>(
    v: View<'_, A, S, M, N>,
    addrs: &[I],
    g: &mut Group<A::Key, W>,
) {
    const { assert!(M || W == 0, "one-segment walks carry no lines") };
    for (i, addr) in addrs.iter().take(LANES).enumerate() {
        let coarse = addr.address().coarse();
        g.x[i] = A::Key::from_coarse(coarse);
        if M && W == 0 {
            // SAFETY: caller's contract (`M`: paged).
            g.node[i] = unsafe { v.slot(coarse) };
            continue;
        }
        // SAFETY: caller's contract.
        let (seg, node) = unsafe { v.entry(coarse) };
        g.node[i] = node;
        if M {
            // SAFETY: the segment is one of the table's (the entry gave it).
            let lines = unsafe { v.lines(seg) };
            g.start[i] = MaybeUninit::new(lines.as_ptr());
            #[cfg(debug_assertions)]
            {
                g.len[i] = lines.len() as u32;
            }
        }
    }
    if M && W == 0 {
        // The slots in a pass of their own, which compiles to vector compares and selects:
        // entering then takes 11.3 instructions a lane against a one-segment walk's 4.4; the
        // same compare and select in the loop above took 7 more a lane (AVX2 walk, et120k
        // live table, callgrind).
        let mut away = 0;
        for (i, node) in g.node.iter_mut().enumerate() {
            let elsewhere = *node & SEGMENT_FIELD != v.home_field;
            away |= u32::from(elsewhere) << i;
            *node = if elsewhere {
                v.stand_in
            } else {
                *node & !SEGMENT_FIELD
            };
        }
        g.away = away;
    }
}

/// Pipeline stage `level` (`1..DEPTH`): one inner step for every lane, then a prefetch of the
/// line the next stage reads (an inner node, or after the last inner level the leaf).
///
/// `from_entry`: the table has depth 2, so this is the one inner step, taken from the lanes'
/// direct entries ([`entry_step`]); a constant where it is called, so the select is compiled
/// only into depth-2 walks.
///
/// # Safety
/// `v.t` satisfies the structure invariants, `DEPTH` is its depth, and every lane of `g` has
/// taken exactly `level - 1` inner steps from its entry node.
#[inline(always)]
pub(super) unsafe fn advance<A: Family, S: Search, const M: bool, const N: bool, const W: usize>(
    v: View<'_, A, S, M, N>,
    g: &mut Group<A::Key, W>,
    from_entry: bool,
) {
    // Four lanes per iteration: the loop overhead is a fifth of a lane's step otherwise.
    for base in (0..LANES).step_by(UNROLL) {
        for i in base..base + UNROLL {
            // SAFETY: the lane is at an inner node of this level (caller's contract), and its
            // child is an inner node, or a leaf after the last inner level, of the same
            // segment.
            unsafe {
                let node = g.node[i];
                g.node[i] = if from_entry {
                    let n = g.line(v.s, v.home, i, entry_line(node));
                    entry_step(v, n, node, g.x[i])
                } else {
                    step(v, g.line(v.s, v.home, i, node), g.x[i])
                };
                v.s.prefetch(g.line(v.s, v.home, i, g.node[i]));
            }
        }
    }
}

/// Lanes stepped per loop iteration.
const UNROLL: usize = 4;

/// Pipeline stage `DEPTH`: the leaf searches, then, in a walk through a home segment, the
/// lookups again of the lanes whose chunk is elsewhere (they walked a stand-in tree).
///
/// # Safety
/// `v.t` satisfies the structure invariants and every lane of `g` is at its leaf.
#[inline(always)]
unsafe fn finish_group<
    A: Family,
    I: AddressInput<A>,
    S: Search,
    O: Output,
    const M: bool,
    const N: bool,
    const W: usize,
>(
    v: View<'_, A, S, M, N>,
    g: &Group<A::Key, W>,
    addrs: &[I],
    out: &mut [O],
    miss: NextHop,
) {
    for (i, (o, addr)) in out.iter_mut().zip(addrs).enumerate().take(LANES) {
        let addr = addr.address();
        // SAFETY: the lane is at a leaf (caller's contract) of its entry's segment, or of the
        // home segment when lanes do not carry their lines.
        *o = unsafe {
            let leaf = g.line(v.s, v.home, i, g.node[i]);
            let seg = || {
                if W == LANES {
                    v.entry(addr.coarse()).0
                } else {
                    v.home_seg
                }
            };
            finish(v, leaf, seg, g.x[i], addr, miss)
        };
    }
    if M && W == 0 {
        let mut away = g.away;
        while away != 0 {
            let i = away.trailing_zeros() as usize;
            away &= away - 1;
            if let (Some(o), Some(addr)) = (out.get_mut(i), addrs.get(i)) {
                // SAFETY: caller's contract.
                *o = O::from_answer(unsafe { one_in(v, addr.address()) }, miss);
            }
        }
    }
}

/// The lanes of group `g` in a batch.
#[inline(always)]
pub(super) fn lanes(g: usize) -> std::ops::Range<usize> {
    g * LANES..(g + 1) * LANES
}

/// The schedule of a per-level pipeline of `$groups` groups through `$stages` searches: in
/// round `r`, group `r` enters (`$enter` with `$round` = `r` and `$g` its state), group
/// `r - level` takes its inner step `level` for each `level` in `1..$stages` (`$step`), and
/// group `r - $stages` searches its leaves (`$finish`, with `$group` its number). So each
/// group enters, takes its `$stages - 1` inner steps in order one round apart, then finishes,
/// and a stage's prefetch has a round of the other groups' work to arrive. Each group's state
/// is `$states[group % IN_FLIGHT]`. The uniform walk ([`batch_of_depth`]) and the staged one
/// (`walk_packed`) both run on it.
///
/// A macro, not a function taking closures: the stages must compile inside the caller's
/// `#[target_feature]` walk. Passed as closures to a helper, they were not inlined with it,
/// and the batch ran at 0.12–0.56× (`scripts/ab-planb.sh`, dfz10 and et-2015).
macro_rules! pipeline {
    (
        $groups:expr, $stages:expr, $states:expr,
        enter($round:ident, $g_in:ident) $enter:block
        step($g_step:ident) $step:block
        finish($group:ident, $g_out:ident) $finish:block
    ) => {{
        const { assert!($stages < IN_FLIGHT, "one pipeline slot per stage") };
        let (groups, states) = ($groups, $states);
        for round in 0..groups + $stages {
            if round < groups {
                let ($round, $g_in) = (round, &mut states[round % IN_FLIGHT]);
                $enter
            }
            for level in 1..$stages {
                if let Some(g) = round.checked_sub(level).filter(|&g| g < groups) {
                    let $g_step = &mut states[g % IN_FLIGHT];
                    $step
                }
            }
            if let Some(g) = round.checked_sub($stages) {
                let ($group, $g_out) = (g, &states[g % IN_FLIGHT]);
                $finish
            }
        }
    }};
}
pub(super) use pipeline;

/// A batch of any length for trees of `DEPTH` steps (a constant, so the level loops unroll):
/// full groups of `LANES` through the pipeline, then single lookups for the rest. In round
/// `r`, group `r` enters, group `r - level` takes inner step `level`, and group `r - DEPTH`
/// searches its leaves.
///
/// # Safety
/// `v.t` satisfies the structure invariants and `DEPTH == v.t.depth()`.
#[inline(always)]
pub(super) unsafe fn batch_of_depth<
    A: Family,
    I: AddressInput<A>,
    S: Search,
    O: Output,
    const M: bool,
    const N: bool,
    const W: usize,
    const DEPTH: usize,
>(
    v: View<'_, A, S, M, N>,
    addrs: &[I],
    out: &mut [O],
    miss: NextHop,
) {
    let n = addrs.len().min(out.len());
    let groups = n / LANES;
    // Uninitialized until a group enters: zeroing all IN_FLIGHT groups per call cost about
    // 100 ns a call (a batch of 32 IPv4 lookups 12.2 -> 9.5 ns each on the AMD EPYC Zen 3),
    // which small batches (a DPDK burst split by family) pay in full.
    let mut states: [MaybeUninit<Group<A::Key, W>>; IN_FLIGHT] =
        [const { MaybeUninit::uninit() }; IN_FLIGHT];
    // `pipeline` has each group enter, take its `DEPTH - 1` inner steps in order one round
    // apart, then search its leaves, as `advance` and `finish_group` require.
    pipeline!(groups, DEPTH, &mut states,
        enter(round, g) {
            if let Some(ahead) = addrs.get(lanes(round + INPUT_AHEAD)) {
                if A::INPUT_NTA {
                    v.s.prefetch_input::<_, true>(ahead);
                } else {
                    v.s.prefetch_input::<_, false>(ahead);
                }
            }
            let g = g.write(Group::new());
            // SAFETY: `v.t` satisfies the structure invariants (caller's contract).
            unsafe { enter(v, &addrs[lanes(round)], g) }
        }
        step(g) {
            // SAFETY: the group entered in an earlier round (`pipeline`'s order), which
            // initialized its slot, and has taken the steps before this one.
            unsafe { advance(v, g.assume_init_mut(), DEPTH == 2) }
        }
        finish(i, g) {
            // SAFETY: as for the steps; the group has taken all its inner steps, so it is at
            // its leaves.
            unsafe {
                finish_group(v, g.assume_init_ref(), &addrs[lanes(i)], &mut out[lanes(i)], miss)
            }
        }
    );
    // The rest one at a time: a padded group for them was slower at every size from 4 to
    // 31 (16 IPv4 addresses: 17 ns each against 15 single; 4: 60 against 21; AMD EPYC Zen 3),
    // since consecutive single walks already overlap in the out-of-order core.
    let rest = groups * LANES;
    for (a, o) in addrs[rest..n].iter().zip(&mut out[rest..n]) {
        // SAFETY: caller's contract.
        *o = O::from_answer(unsafe { one_in(v, a.address()) }, miss);
    }
}

/// A batch: `out[i]` gets the answer for `addrs[i]` (the shorter slice bounds the work). The
/// depth is fixed per table (at most 6 for any table whose node indices fit 32 bits), and so is
/// the number of segments, so this runs once per batch and the walk it picks has both as
/// constants.
///
/// # Safety
/// `t` satisfies PlanB's structure invariants ([`super::validate`]).
#[inline(always)]
pub unsafe fn batch<A: Family, I: AddressInput<A>, S: Search, O: Output>(
    t: &PlanB<A>,
    s: S,
    addrs: &[I],
    out: &mut [O],
    miss: NextHop,
) {
    // SAFETY: caller's contract; `M` is whether the tree is paged.
    unsafe {
        let t = t.tree();
        match (t.pages().is_empty(), t.narrow()) {
            (true, false) => {
                batch_in::<_, _, _, _, false, false, 0>(View::new(t, s), addrs, out, miss)
            }
            (true, true) => {
                batch_in::<_, _, _, _, false, true, 0>(View::new(t, s), addrs, out, miss)
            }
            (false, narrow) => match (t.home_chunk().is_some(), narrow) {
                (true, false) => batch_in::<_, _, _, _, true, false, 0>(
                    View::new(t, s).with_home(),
                    addrs,
                    out,
                    miss,
                ),
                (true, true) => batch_in::<_, _, _, _, true, true, 0>(
                    View::new(t, s).with_home(),
                    addrs,
                    out,
                    miss,
                ),
                (false, false) => {
                    batch_in::<_, _, _, _, true, false, LANES>(View::new(t, s), addrs, out, miss)
                }
                (false, true) => {
                    batch_in::<_, _, _, _, true, true, LANES>(View::new(t, s), addrs, out, miss)
                }
            },
        }
    }
}

/// [`batch`] through `v`.
///
/// # Safety
/// `v.t` satisfies the structure invariants, and `M` is true if it is paged.
#[inline(always)]
unsafe fn batch_in<
    A: Family,
    I: AddressInput<A>,
    S: Search,
    O: Output,
    const M: bool,
    const N: bool,
    const W: usize,
>(
    v: View<'_, A, S, M, N>,
    addrs: &[I],
    out: &mut [O],
    miss: NextHop,
) {
    // SAFETY: the depth passed is the table's own (caller's contract for the rest).
    unsafe {
        match v.t.depth() {
            1 => batch_of_depth::<A, I, S, O, M, N, W, 1>(v, addrs, out, miss),
            2 => batch_of_depth::<A, I, S, O, M, N, W, 2>(v, addrs, out, miss),
            3 => batch_of_depth::<A, I, S, O, M, N, W, 3>(v, addrs, out, miss),
            4 => batch_of_depth::<A, I, S, O, M, N, W, 4>(v, addrs, out, miss),
            5 => batch_of_depth::<A, I, S, O, M, N, W, 5>(v, addrs, out, miss),
            6 => batch_of_depth::<A, I, S, O, M, N, W, 6>(v, addrs, out, miss),
            _ => {
                for (a, o) in addrs.iter().zip(out.iter_mut()) {
                    *o = O::from_answer(one_in(v, a.address()), miss);
                }
            }
        }
    }
}

/// A backend's walks, single and batched, compiled with its instruction set: what
/// [`crate::cpu::with_token!`] calls for the table's backend.
pub trait Walk: Search {
    /// The batched walk of `addrs` into `out`.
    ///
    /// # Safety
    /// `t` satisfies the structure invariants.
    unsafe fn batch<A: Family, I: AddressInput<A>, O: Output>(
        self,
        t: &PlanB<A>,
        addrs: &[I],
        out: &mut [O],
        miss: NextHop,
    );

    /// One lookup.
    ///
    /// # Safety
    /// As for [`Walk::batch`].
    unsafe fn one<A: Family>(self, t: &PlanB<A>, addr: A) -> Option<NextHop>;
}

/// Implements [`Walk`] for a backend token with its walks: `$batch` and `$one`, functions of
/// the table, the token and the [`Walk`] arguments (the x86 ones compiled with the backend's
/// `#[target_feature]`).
macro_rules! walk {
    ($token:ty, $batch:path, $one:path) => {
        impl Walk for $token {
            #[inline(always)]
            unsafe fn batch<A: Family, I: AddressInput<A>, O: Output>(
                self,
                t: &PlanB<A>,
                addrs: &[I],
                out: &mut [O],
                miss: NextHop,
            ) {
                // SAFETY: caller's contract; the token proves the CPU features.
                unsafe { $batch(t, self, addrs, out, miss) }
            }

            #[inline(always)]
            unsafe fn one<A: Family>(self, t: &PlanB<A>, addr: A) -> Option<NextHop> {
                // SAFETY: caller's contract; the token proves the CPU features.
                unsafe { $one(t, self, addr) }
            }
        }
    };
}
// The portable walks, for the scalar search and NEON's (part of every aarch64 CPU, so its
// walk needs no `target_feature`).
walk!(Scalar, batch, one_portable);
#[cfg(target_arch = "aarch64")]
walk!(crate::cpu::Neon, batch, one_portable);

#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use super::super::search::{avx2::Avx2, avx512::Avx512};
    use super::*;

    /// The batched and single walks of backend `$token`, compiled with `$features`, and its
    /// [`Walk`].
    macro_rules! x86_walks {
        ($token:ident, $features:literal, $batch:ident, $one:ident) => {
            #[doc = concat!("Batched walk with `", $features, "` enabled.")]
            ///
            /// # Safety
            /// `t` satisfies the structure invariants (the token proves the CPU features).
            #[target_feature(enable = $features)]
            pub unsafe fn $batch<A: Family, I: AddressInput<A>, O: Output>(
                t: &PlanB<A>,
                s: $token,
                addrs: &[I],
                out: &mut [O],
                miss: NextHop,
            ) {
                // SAFETY: caller's contract.
                unsafe { batch(t, s, addrs, out, miss) }
            }

            #[doc = concat!("Single walk with `", $features, "` enabled.")]
            ///
            /// # Safety
            #[doc = concat!("As for [`", stringify!($batch), "`].")]
            #[target_feature(enable = $features)]
            pub unsafe fn $one<A: Family>(t: &PlanB<A>, s: $token, addr: A) -> Option<NextHop> {
                // SAFETY: caller's contract.
                unsafe { one(t, s, addr) }
            }

            walk!($token, $batch, $one);
        };
    }
    x86_walks!(Avx512, "avx512f,avx512bw,popcnt", batch_avx512, one_avx512);
    x86_walks!(Avx2, "avx2,popcnt", batch_avx2, one_avx2);
}
