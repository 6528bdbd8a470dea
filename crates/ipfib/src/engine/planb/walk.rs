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

use super::layout::{chunk_of, entry_line, Family, Key, Segment, LEAF_ENTRY};
use super::search::scalar::Scalar;
use super::search::Search;
use super::PlanB;
use crate::addr::AddressInput;
use crate::route_table::NextHop;

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
/// sharing segments costs a static table nothing. A live table between compactions is walked
/// with `MULTI = true`: each lane carries its chunk's segment. `NARROW` is the table's leaf
/// format (`layout`), a constant so that reading an answer never tests it.
#[derive(Clone, Copy)]
struct View<'t, A: Family, S, const MULTI: bool, const NARROW: bool> {
    t: &'t PlanB<A>,
    s: S,
    /// Segment 0's lines.
    home: &'t [<A::Key as Key>::Line],
}

impl<'t, A: Family, S: Search, const MULTI: bool, const NARROW: bool>
    View<'t, A, S, MULTI, NARROW>
{
    fn new(t: &'t PlanB<A>, s: S) -> Self {
        View {
            t,
            s,
            home: &t.home,
        }
    }

    /// The segment and entry node of the chunk of `coarse`.
    ///
    /// # Safety
    /// `t` satisfies the structure invariants.
    #[inline(always)]
    unsafe fn entry(self, coarse: u64) -> (u32, u32) {
        let chunk = chunk_of::<A>(coarse);
        // SAFETY: a chunk index is below 2^16 = `direct.len()`, and `segment_of.len()` when
        // there are several segments (structure invariants).
        unsafe {
            let seg = if MULTI {
                u32::from(*self.s.at(&self.t.segment_of, chunk))
            } else {
                0
            };
            (seg, *self.s.at(&self.t.direct, chunk))
        }
    }

    /// The lines of segment `seg`.
    ///
    /// # Safety
    /// `seg` is a segment of `t` (one [`View::entry`] gave).
    #[inline(always)]
    unsafe fn lines(self, seg: u32) -> &'t [<A::Key as Key>::Line] {
        if MULTI {
            // SAFETY: caller's contract.
            unsafe { &self.s.at(&self.t.segments, seg as usize).lines }
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
        unsafe { self.s.at(&self.t.segments, seg as usize) }.as_ref()
    }
}

/// One inner step in segment `seg`: the node's link plus the rank of `x` in it.
///
/// # Safety
/// `v.t` satisfies the structure invariants, `seg` is a segment of it and `node` an inner node
/// of that segment the walk reached.
#[inline(always)]
unsafe fn step<A: Family, S: Search, const M: bool, const N: bool>(
    v: View<'_, A, S, M, N>,
    seg: u32,
    node: u32,
    x: A::Key,
) -> u32 {
    // SAFETY: the walk reaches only segments and inner nodes that exist (caller's contract).
    let n = unsafe { v.s.at(v.lines(seg), node as usize) };
    // Wrapping: an inner node's sum never overflows (structure invariants), but a leaf read
    // as one by `entry_step` may, and that result is dropped.
    A::Key::link(n).wrapping_add(A::Key::rank_inner(v.s, n, x))
}

/// The inner step of a table of depth 2, from a lane's direct entry: as [`step`], except that
/// an entry marked [`LEAF_ENTRY`] names the chunk's only leaf, and the lane stays there (its
/// line is searched as an inner node and the result dropped: a select, not a branch, so the
/// lanes of a batch never diverge).
///
/// # Safety
/// As for [`step`], with `entry` a direct entry of a table of depth 2.
#[inline(always)]
unsafe fn entry_step<A: Family, S: Search, const M: bool, const N: bool>(
    v: View<'_, A, S, M, N>,
    seg: u32,
    entry: u32,
    x: A::Key,
) -> u32 {
    let line = entry_line(entry);
    // SAFETY: as in `step`; the line of a marked entry is a leaf of the segment, which may be
    // read as any line.
    let next = unsafe { step(v, seg, line, x) };
    if entry & LEAF_ENTRY != 0 {
        line
    } else {
        next
    }
}

/// The leaf step: the answer at the rank of `x` in leaf `node` of segment `seg`.
///
/// # Safety
/// `v.t` satisfies the structure invariants, `seg` is a segment of it and `node` a leaf of
/// that segment the walk reached.
#[inline(always)]
unsafe fn finish<A: Family, S: Search, O: Output, const M: bool, const N: bool>(
    v: View<'_, A, S, M, N>,
    seg: u32,
    node: u32,
    x: A::Key,
    addr: A,
    miss: NextHop,
) -> O {
    // SAFETY: the walk reaches only segments and leaves that exist (caller's contract).
    let leaf = unsafe { v.s.at(v.lines(seg), node as usize) };
    let rank = A::Key::rank_leaf::<S, N>(v.s, leaf, x);
    // SAFETY: as above.
    PlanB::<A>::answer::<O, N>(|| unsafe { v.segment(seg) }, leaf, rank, addr, miss)
}

/// One lookup.
///
/// # Safety
/// `t` satisfies PlanB's structure invariants ([`super::validate`]).
#[inline(always)]
pub unsafe fn one<A: Family, S: Search>(t: &PlanB<A>, s: S, addr: A) -> Option<NextHop> {
    // SAFETY: caller's contract.
    unsafe {
        match (t.segments.len() == 1, t.narrow) {
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
/// `v.t` satisfies the structure invariants, and `M` is true if it has several segments.
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
        if v.t.depth == 2 {
            node = entry_step(v, seg, node, x);
        } else {
            for _ in 1..v.t.depth {
                node = step(v, seg, node, x);
            }
        }
        finish(v, seg, node, x, addr, 0)
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
        let lines = &self.segments[segment].lines;
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
        let entry = self.direct[chunk_of::<A>(coarse)];
        let node = self.descend(0, entry, x, self.depth.saturating_sub(1));
        let leaf = &self.segments[0].lines[node as usize];
        (node, A::Key::rank_leaf_in(s, leaf, x, self.narrow))
    }
}

/// The walk state of one group of `LANES` lookups as it moves through the pipeline.
struct Group<K> {
    /// Each lane's key bits.
    x: [K; LANES],
    /// Each lane's current node: its entry node, inner nodes, then its leaf.
    node: [u32; LANES],
    /// Each lane's segment (always 0 in a one-segment walk).
    seg: [u32; LANES],
}

impl<K: Key> Group<K> {
    fn new() -> Self {
        Group {
            x: [K::default(); LANES],
            node: [0; LANES],
            seg: [0; LANES],
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

/// How many steps of 16 addresses ahead the staged walk's staging step asks for its input
/// (as ordinary lines: 1 KiB ahead as non-temporal lines, the staging step waited on
/// memory for most of its time on the third machine, where a line past 8 MiB takes 150 ns).
/// In one process (`scripts/ab-planb.sh`, dfz10 uniform, 5–9 rounds, against 4 steps
/// non-temporal): ordinary prefetches 4 steps ahead 1.51×, 8 steps 1.60×, 16 steps
/// 1.64–1.72×, 32 steps 1.69×, 64 steps 1.66×; non-temporal ones 16 steps ahead 1.11×, 32
/// steps 1.03×.
#[cfg(target_arch = "x86_64")]
const STAGE_AHEAD: usize = 16;

/// Groups a pipelined batch keeps in flight at most: one per step of the deepest walk the
/// batched path takes (depth 6) and one entering.
const IN_FLIGHT: usize = 8;

/// Pipeline stage 0: each lane's key bits, segment and entry node.
///
/// # Safety
/// `v.t` satisfies the structure invariants.
#[inline(always)]
unsafe fn enter<A: Family, I: AddressInput<A>, S: Search, const M: bool, const N: bool>(
    v: View<'_, A, S, M, N>,
    addrs: &[I],
    g: &mut Group<A::Key>,
) {
    for (i, addr) in addrs.iter().take(LANES).enumerate() {
        let coarse = addr.address().coarse();
        g.x[i] = A::Key::from_coarse(coarse);
        // SAFETY: caller's contract.
        (g.seg[i], g.node[i]) = unsafe { v.entry(coarse) };
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
unsafe fn advance<A: Family, S: Search, const M: bool, const N: bool>(
    v: View<'_, A, S, M, N>,
    g: &mut Group<A::Key>,
    from_entry: bool,
) {
    // Four lanes per iteration: the loop overhead is a fifth of a lane's step otherwise.
    for base in (0..LANES).step_by(UNROLL) {
        for i in base..base + UNROLL {
            // SAFETY: the lane is at an inner node of this level (caller's contract), and its
            // child is an inner node, or a leaf after the last inner level, of the same
            // segment.
            unsafe {
                g.node[i] = if from_entry {
                    entry_step(v, g.seg[i], g.node[i], g.x[i])
                } else {
                    step(v, g.seg[i], g.node[i], g.x[i])
                };
                v.s.prefetch(v.s.at(v.lines(g.seg[i]), g.node[i] as usize));
            }
        }
    }
}

/// Lanes stepped per loop iteration.
const UNROLL: usize = 4;

/// Pipeline stage `DEPTH`: the leaf searches.
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
>(
    v: View<'_, A, S, M, N>,
    g: &Group<A::Key>,
    addrs: &[I],
    out: &mut [O],
    miss: NextHop,
) {
    for (i, (o, addr)) in out.iter_mut().zip(addrs).enumerate().take(LANES) {
        // SAFETY: the lane is at a leaf (caller's contract).
        *o = unsafe { finish(v, g.seg[i], g.node[i], g.x[i], addr.address(), miss) };
    }
}

/// The lanes of group `g` in a batch.
#[inline(always)]
fn lanes(g: usize) -> std::ops::Range<usize> {
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

/// A batch of any length for trees of `DEPTH` steps (a constant, so the level loops unroll):
/// full groups of `LANES` through the pipeline, then single lookups for the rest. In round
/// `r`, group `r` enters, group `r - level` takes inner step `level`, and group `r - DEPTH`
/// searches its leaves.
///
/// # Safety
/// `v.t` satisfies the structure invariants and `DEPTH == v.t.depth`.
#[inline(always)]
unsafe fn batch_of_depth<
    A: Family,
    I: AddressInput<A>,
    S: Search,
    O: Output,
    const M: bool,
    const N: bool,
    const DEPTH: usize,
>(
    v: View<'_, A, S, M, N>,
    addrs: &[I],
    out: &mut [O],
    miss: NextHop,
) {
    let groups = addrs.len().min(out.len()) / LANES;
    let mut states: [Group<A::Key>; IN_FLIGHT] = std::array::from_fn(|_| Group::new());
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
            // SAFETY: `v.t` satisfies the structure invariants (caller's contract).
            unsafe { enter(v, &addrs[lanes(round)], g) }
        }
        step(g) {
            // SAFETY: the group has taken the steps before this one (`pipeline`'s order).
            unsafe { advance(v, g, DEPTH == 2) }
        }
        finish(i, g) {
            // SAFETY: the group has taken all its inner steps, so it is at its leaves.
            unsafe { finish_group(v, g, &addrs[lanes(i)], &mut out[lanes(i)], miss) }
        }
    );
    let rest = groups * LANES;
    for (a, o) in addrs[rest..].iter().zip(&mut out[rest..]) {
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
    // SAFETY: caller's contract; `M` matches the number of segments.
    unsafe {
        match (t.segments.len() == 1, t.narrow) {
            (true, false) => batch_in(View::<A, S, false, false>::new(t, s), addrs, out, miss),
            (true, true) => batch_in(View::<A, S, false, true>::new(t, s), addrs, out, miss),
            (false, false) => batch_in(View::<A, S, true, false>::new(t, s), addrs, out, miss),
            (false, true) => batch_in(View::<A, S, true, true>::new(t, s), addrs, out, miss),
        }
    }
}

/// [`batch`] through `v`.
///
/// # Safety
/// `v.t` satisfies the structure invariants, and `M` is true if it has several segments.
#[inline(always)]
unsafe fn batch_in<
    A: Family,
    I: AddressInput<A>,
    S: Search,
    O: Output,
    const M: bool,
    const N: bool,
>(
    v: View<'_, A, S, M, N>,
    addrs: &[I],
    out: &mut [O],
    miss: NextHop,
) {
    // SAFETY: the depth passed is the table's own (caller's contract for the rest).
    unsafe {
        match v.t.depth {
            1 => batch_of_depth::<A, I, S, O, M, N, 1>(v, addrs, out, miss),
            2 => batch_of_depth::<A, I, S, O, M, N, 2>(v, addrs, out, miss),
            3 => batch_of_depth::<A, I, S, O, M, N, 3>(v, addrs, out, miss),
            4 => batch_of_depth::<A, I, S, O, M, N, 4>(v, addrs, out, miss),
            5 => batch_of_depth::<A, I, S, O, M, N, 5>(v, addrs, out, miss),
            6 => batch_of_depth::<A, I, S, O, M, N, 6>(v, addrs, out, miss),
            _ => {
                for (a, o) in addrs.iter().zip(out.iter_mut()) {
                    *o = O::from_answer(one_in(v, a.address()), miss);
                }
            }
        }
    }
}

/// The walks compiled with each SIMD instruction set enabled, so the node search inlines.
#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use super::super::search::{avx2::Avx2, avx512::Avx512};
    use super::super::staged::{
        blocks, sample, Staged, ANSWERED, ANSWERED_HOP, ANSWERED_MISS, BLOCK, ENTER_LEAF,
        ENTER_NEAR, ENTRY_NODE, SPLIT, SUB_BASE, SUB_SHIFT_AT,
    };
    use super::*;

    /// The staged batch ([`super::super::staged`]) of IPv6 addresses into next hops, with
    /// AVX-512 enabled: each block ([`blocks`]: [`BLOCK`] addresses, the last one maybe fewer)
    /// whose sample says the staged tables answer enough of them is split into answered lanes
    /// (written at once) and walk lanes (packed, then walked by the pipeline); runs of other
    /// blocks take the uniform walk.
    ///
    /// `SWAP`: the addresses are network-order bytes, each byte-reversed once loaded.
    ///
    /// # Safety
    /// `t` satisfies the structure invariants, has one segment and depth 3 or more, and
    /// `staged` are its staged tables (the token proves the CPU features); `I` is a
    /// `u128` (`SWAP` false) or its network-order bytes (`SWAP` true), and the batch is
    /// shorter than 2^32.
    #[target_feature(enable = "avx512f,avx512bw,popcnt")]
    pub unsafe fn staged_avx512<I: AddressInput<u128>, const SWAP: bool>(
        t: &PlanB<u128>,
        s: Avx512,
        staged: &Staged,
        addrs: &[I],
        out: &mut [NextHop],
        miss: NextHop,
    ) {
        // SAFETY: caller's contract; the depth passed is the table's own.
        unsafe {
            match (t.narrow, t.depth) {
                (false, 3) => staged_walk::<I, SWAP, false, 3>(t, s, staged, addrs, out, miss),
                (false, 4) => staged_walk::<I, SWAP, false, 4>(t, s, staged, addrs, out, miss),
                (false, 5) => staged_walk::<I, SWAP, false, 5>(t, s, staged, addrs, out, miss),
                (false, 6) => staged_walk::<I, SWAP, false, 6>(t, s, staged, addrs, out, miss),
                (true, 3) => staged_walk::<I, SWAP, true, 3>(t, s, staged, addrs, out, miss),
                (true, 4) => staged_walk::<I, SWAP, true, 4>(t, s, staged, addrs, out, miss),
                (true, 5) => staged_walk::<I, SWAP, true, 5>(t, s, staged, addrs, out, miss),
                (true, 6) => staged_walk::<I, SWAP, true, 6>(t, s, staged, addrs, out, miss),
                _ => batch(t, s, addrs, out, miss),
            }
        }
    }

    /// [`staged_avx512`] for leaf format `N` and depth `DEPTH`.
    ///
    /// # Safety
    /// As for [`staged_avx512`].
    #[inline(always)]
    unsafe fn staged_walk<
        I: AddressInput<u128>,
        const SWAP: bool,
        const N: bool,
        const DEPTH: usize,
    >(
        t: &PlanB<u128>,
        s: Avx512,
        staged: &Staged,
        addrs: &[I],
        out: &mut [NextHop],
        miss: NextHop,
    ) {
        let v = View::<u128, Avx512, false, N>::new(t, s);
        let n = addrs.len().min(out.len());
        // The thread's classes, made on its first staged block and kept for its next batches
        // (`PACKED_LANES`).
        let mut packed: Option<Box<Classes>> = None;
        // The start of the run of blocks not staged yet: they take the uniform walk together,
        // so a trace that never stages pays one sample per block and nothing else.
        let mut run = 0;
        let mut blocks = blocks(n).peekable();
        while let Some(block) = blocks.next() {
            // The next block's sample, asked for now: read cold, its eight lines were a wait
            // in front of every block.
            if let Some(next) = blocks.peek() {
                for a in sample(&addrs[next.clone()]) {
                    s.prefetch(a);
                }
            }
            if staged.stages(&addrs[block.clone()], |a| a.address().coarse()) {
                // SAFETY: caller's contract, as above; `DEPTH` is the table's depth.
                unsafe {
                    batch_of_depth::<u128, I, Avx512, NextHop, false, N, DEPTH>(
                        v,
                        &addrs[run..block.start],
                        &mut out[run..block.start],
                        miss,
                    );
                    let classes = &mut **packed
                        .get_or_insert_with(|| PACKED_LANES.take().unwrap_or_else(classes));
                    staged_block::<I, SWAP, N, DEPTH>(
                        v,
                        staged,
                        addrs,
                        block.clone(),
                        out,
                        miss,
                        classes,
                    );
                }
                run = block.end;
            }
        }
        // SAFETY: as above.
        unsafe {
            batch_of_depth::<u128, I, Avx512, NextHop, false, N, DEPTH>(
                v,
                &addrs[run..n],
                &mut out[run..n],
                miss,
            );
            if let Some(classes) = packed.as_deref_mut() {
                walk_rests::<I, N, DEPTH>(v, classes, addrs, out, miss);
            }
        };
        if packed.is_some() {
            PACKED_LANES.set(packed);
        }
    }

    std::thread_local! {
        /// Each thread's packed walk lanes between batches (empty: every lane is walked by
        /// the end of a batch). Made anew on each call, they were zeroed for every batch that
        /// staged a block: with blocks of 1,024 and batches of 4,096 addresses (`ipfib
        /// bench`'s default) that was 10 bytes written per address (41 KiB per batch; about 150
        /// KiB now that blocks are 4,096), and pushed the table's lines out of L1.
        static PACKED_LANES: std::cell::Cell<Option<Box<Classes>>> =
            const { std::cell::Cell::new(None) };
    }

    /// One staged block, the one at `at` ([`stage`], then each class's full groups through
    /// [`walk_packed`]). Out of line, as is [`walk_rests`], so that the uniform walk the
    /// caller inlines for blocks not staged is compiled as it would be alone, whatever the
    /// staged code around it (a call per 1,024 addresses costs nothing measurable).
    ///
    /// # Safety
    /// As for [`stage`] and [`walk_packed`], with `v` the view of a table of depth `DEPTH`.
    #[target_feature(enable = "avx512f,avx512bw,popcnt")]
    #[inline(never)]
    unsafe fn staged_block<
        I: AddressInput<u128>,
        const SWAP: bool,
        const N: bool,
        const DEPTH: usize,
    >(
        v: View<'_, u128, Avx512, false, N>,
        staged: &Staged,
        addrs: &[I],
        block: std::ops::Range<usize>,
        out: &mut [NextHop],
        miss: NextHop,
        classes: &mut Classes,
    ) {
        // SAFETY: caller's contract.
        unsafe {
            stage::<I, SWAP>(v.s, staged, addrs, block, out, miss, &mut classes.packed);
            let [root, mid, near, leaf] = &mut classes.packed;
            let states = &mut classes.states;
            walk_packed::<I, N, DEPTH, false>(v, root, states, addrs, out, miss);
            walk_packed::<I, N, 3, true>(v, mid, states, addrs, out, miss);
            walk_packed::<I, N, 2, true>(v, near, states, addrs, out, miss);
            walk_packed::<I, N, 1, true>(v, leaf, states, addrs, out, miss);
        }
    }

    /// The lanes each class holds at the end of a batch ([`walk_rest`]).
    ///
    /// # Safety
    /// As for [`walk_rest`], with `v` the view of a table of depth `DEPTH`.
    #[target_feature(enable = "avx512f,avx512bw,popcnt")]
    #[inline(never)]
    unsafe fn walk_rests<I: AddressInput<u128>, const N: bool, const DEPTH: usize>(
        v: View<'_, u128, Avx512, false, N>,
        classes: &mut Classes,
        addrs: &[I],
        out: &mut [NextHop],
        miss: NextHop,
    ) {
        let [root, mid, near, leaf] = &mut classes.packed;
        // SAFETY: caller's contract.
        unsafe {
            walk_rest::<I, N, DEPTH>(v, root, addrs, out, miss);
            walk_rest::<I, N, 3>(v, mid, addrs, out, miss);
            walk_rest::<I, N, 2>(v, near, addrs, out, miss);
            walk_rest::<I, N, 1>(v, leaf, addrs, out, miss);
        }
    }

    /// Slots of a [`Packed`]: fewer than [`LANES`] lanes carried over from earlier blocks, a
    /// block's, and the 16 that a compressed store writes past the last.
    const PACKED: usize = LANES + BLOCK + 16;

    /// Walk lanes, packed: key bits, entry node and position in the batch. A block's lanes are
    /// appended, the full groups walked, and the rest (fewer than [`LANES`]) carried to the
    /// next block's, so a lane walks alone only at the end of a batch.
    struct Packed {
        x: [u32; PACKED],
        node: [u32; PACKED],
        at: [u32; PACKED],
        len: usize,
    }

    impl Packed {
        fn new() -> Self {
            Packed {
                x: [0; PACKED],
                node: [0; PACKED],
                at: [0; PACKED],
                len: 0,
            }
        }
    }

    /// The walk lanes of a block by where they enter: a chunk's entry node (`root`), the
    /// inner node two above their leaf (`mid`, [`ENTER_MID`]), the one above their leaf
    /// (`near`, [`ENTER_NEAR`]), their leaf (`leaf`, [`ENTER_LEAF`]).
    ///
    /// [`ENTER_MID`]: super::super::staged::ENTER_MID
    struct Classes {
        packed: [Packed; 4],
        /// The pipeline's groups, for each class's walk in turn (made once, like the rest).
        states: [Group<u32>; IN_FLIGHT],
    }

    /// Empty classes, on the heap (about 200 KiB; a block fills at most 48 KiB of them).
    fn classes() -> Box<Classes> {
        Box::new(Classes {
            packed: std::array::from_fn(|_| Packed::new()),
            states: std::array::from_fn(|_| Group::new()),
        })
    }

    /// Splits `block` (a multiple of 16 addresses, at most [`BLOCK`]): every lane's answer from the staged
    /// tables goes to `out` (walk lanes get theirs later), and the walk lanes are appended to
    /// their class in `classes` (by the node they enter at), sixteen addresses per step: their
    /// top 64 bits gathered, chunk and key bits cut out, the entries gathered (and, for lanes
    /// in split chunks, their sub-table entries), and the walk lanes compressed.
    ///
    /// # Safety
    /// `block` is as above and inside `addrs` and `out`, `staged` were made by
    /// [`Staged::of`] or [`Staged::with_splits`], each class holds fewer than [`LANES`]
    /// lanes, and the CPU has AVX-512F (the token).
    #[inline(always)]
    unsafe fn stage<I: AddressInput<u128>, const SWAP: bool>(
        s: Avx512,
        staged: &Staged,
        addrs: &[I],
        block: std::ops::Range<usize>,
        out: &mut [NextHop],
        miss: NextHop,
        classes: &mut [Packed; 4],
    ) {
        use std::arch::x86_64::*;
        const STEP: usize = 16;
        let start = block.start;
        let steps = block.len() / STEP;
        debug_assert!(block.end <= addrs.len().min(out.len()));
        debug_assert!(block.len().is_multiple_of(STEP) && block.len() <= BLOCK && steps > 0);
        // SAFETY: every load reads 16 addresses of the block and every store writes 16 lanes
        // of `out` in the block, or 16 slots of a class from its `len`: a class holds fewer
        // than `LANES` lanes before the block (`walk_packed` leaves them) and a step adds at
        // most 16, so before step `j` `len < LANES + 16 j` and the store ends inside
        // `PACKED`. Gather indices are chunk numbers (the top 16 bits), below 2^16 =
        // `entries.len()`, and for split lanes a sub-table's first index plus the key shifted
        // down to the sub-table's width, inside `sub` (as `Staged::of` and
        // `Staged::with_splits` make them). Positions are below the batch length, which fits
        // 32 bits (`staged::batch`). The CPU has AVX-512F (caller).
        unsafe {
            let high_halves = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
            let lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
            let answered = _mm512_set1_epi32(ANSWERED as i32);
            let no_route = _mm512_set1_epi32(ANSWERED_MISS as i32);
            let hop = _mm512_set1_epi32(ANSWERED_HOP as i32);
            let missing = _mm512_set1_epi32(miss as i32);
            let kind = _mm512_set1_epi32((ANSWERED | SPLIT) as i32);
            let split = _mm512_set1_epi32(SPLIT as i32);
            let sub_base = _mm512_set1_epi32(SUB_BASE as i32);
            let shift_bits = _mm512_set1_epi32(31);
            let enter_leaf = _mm512_set1_epi32(ENTER_LEAF as i32);
            let enter_near = _mm512_set1_epi32(ENTER_NEAR as i32);
            let entry_node = _mm512_set1_epi32(ENTRY_NODE as i32);
            let (entries, sub) = (&staged.entries, &staged.sub);
            const {
                assert!(
                    std::mem::size_of::<I>() == 16,
                    "an IPv6 address or its bytes"
                )
            };
            // Reverses the bytes of each 128-bit lane: network order to the CPU's.
            let reverse = _mm512_broadcast_i32x4(_mm_set_epi8(
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
            ));
            let load = |p: *const __m512i| {
                let a = _mm512_loadu_si512(p);
                if SWAP {
                    _mm512_shuffle_epi8(a, reverse)
                } else {
                    a
                }
            };
            let input = addrs.as_ptr().add(start).cast::<__m512i>();
            let mut len = classes.each_ref().map(|p| p.len);
            // Step `j`'s key bits and direct entries, and then for lanes in split chunks their
            // sub-table entries. Macros, not closures: a closure this size is not inlined, and
            // out of line it is compiled without AVX-512 (the batch ran at a third of its
            // speed).
            macro_rules! direct_of {
                ($j:expr) => {{
                    let j: usize = $j;
                    let ahead = start + (j + STAGE_AHEAD) * STEP;
                    if let Some(ahead) = addrs.get(ahead..ahead + STEP) {
                        s.prefetch_input::<_, false>(ahead);
                    }
                    // Four addresses per register, each its low then its high 64 bits.
                    let a0 = load(input.add(4 * j));
                    let a1 = load(input.add(4 * j + 1));
                    let a2 = load(input.add(4 * j + 2));
                    let a3 = load(input.add(4 * j + 3));
                    let h0 = _mm512_permutex2var_epi64(a0, high_halves, a1);
                    let h1 = _mm512_permutex2var_epi64(a2, high_halves, a3);
                    // Key bits 16..48 and chunk bits 0..16 of each address.
                    let key = _mm512_inserti64x4::<1>(
                        _mm512_castsi256_si512(_mm512_cvtepi64_epi32(_mm512_srli_epi64::<16>(h0))),
                        _mm512_cvtepi64_epi32(_mm512_srli_epi64::<16>(h1)),
                    );
                    let chunk = _mm512_inserti64x4::<1>(
                        _mm512_castsi256_si512(_mm512_cvtepi64_epi32(_mm512_srli_epi64::<48>(h0))),
                        _mm512_cvtepi64_epi32(_mm512_srli_epi64::<48>(h1)),
                    );
                    (
                        key,
                        _mm512_i32gather_epi32::<4>(chunk, entries.as_ptr().cast()),
                    )
                }};
            }
            macro_rules! sub_of {
                ($key:expr, $entry:expr) => {{
                    let (key, entry) = ($key, $entry);
                    let splits = _mm512_cmpeq_epi32_mask(_mm512_and_si512(entry, kind), split);
                    if splits == 0 {
                        entry
                    } else {
                        let shift = _mm512_and_si512(
                            _mm512_srli_epi32::<{ SUB_SHIFT_AT }>(entry),
                            shift_bits,
                        );
                        let block = _mm512_add_epi32(
                            _mm512_and_si512(entry, sub_base),
                            _mm512_srlv_epi32(key, shift),
                        );
                        _mm512_mask_i32gather_epi32::<4>(entry, splits, block, sub.as_ptr().cast())
                    }
                }};
            }
            // Software-pipelined: step `j + 2`'s direct entries and step `j + 1`'s sub-table
            // entries are asked for before step `j`'s lanes are stored and packed, so each
            // gather has a step's work to hide behind, and the sub-table gather no longer waits
            // on the direct gather just issued.
            let first = direct_of!(0);
            let mut next = (first.0, sub_of!(first.0, first.1));
            let mut after = if steps > 1 { direct_of!(1) } else { first };
            for j in 0..steps {
                let (key, entry) = next;
                if j + 1 < steps {
                    let ahead = after;
                    if j + 2 < steps {
                        after = direct_of!(j + 2);
                    }
                    next = (ahead.0, sub_of!(ahead.0, ahead.1));
                }
                let walk = _mm512_testn_epi32_mask(entry, answered);
                let none = _mm512_test_epi32_mask(entry, no_route);
                let answer = _mm512_mask_blend_epi32(none, _mm512_and_si512(entry, hop), missing);
                _mm512_storeu_si512(out.as_mut_ptr().add(start + STEP * j).cast(), answer);
                let at = _mm512_add_epi32(lane, _mm512_set1_epi32((start + STEP * j) as i32));
                // No walk lane among the sixteen: nothing to pack (most steps of a trace the
                // staged tables answer).
                if walk == 0 {
                    continue;
                }
                let leaf = _mm512_mask_test_epi32_mask(walk, entry, enter_leaf);
                let near = _mm512_mask_test_epi32_mask(walk, entry, enter_near);
                let node = _mm512_and_si512(entry, entry_node);
                // `ENTER_MID` is both marks.
                let masks = [
                    walk & !(leaf | near),
                    leaf & near,
                    near & !leaf,
                    leaf & !near,
                ];
                // Only the first class when no lane enters deeper (a branch as predictable as
                // the trace: a table's sub-tables mostly answer, or mostly name nodes).
                let classes_used = if (leaf | near) == 0 { 1 } else { 4 };
                for ((p, len), mask) in classes
                    .iter_mut()
                    .zip(&mut len)
                    .zip(masks)
                    .take(classes_used)
                {
                    let slots = [
                        (p.x.as_mut_ptr(), key),
                        (p.node.as_mut_ptr(), node),
                        (p.at.as_mut_ptr(), at),
                    ];
                    for (base, values) in slots {
                        // Compressed in a register and stored whole: a compress straight to
                        // memory is microcoded on some CPUs.
                        _mm512_storeu_si512(
                            base.add(*len).cast(),
                            _mm512_maskz_compress_epi32(mask, values),
                        );
                    }
                    *len += mask.count_ones() as usize;
                }
            }
            for (p, len) in classes.iter_mut().zip(len) {
                p.len = len;
            }
        }
    }

    /// The full groups of [`LANES`] of one class's packed walk lanes through the pipeline,
    /// each `SEARCHES` searches from its packed node (the table's depth from an entry node,
    /// fewer from a node a sub-table named), each answer written at its lane's position; the
    /// rest are moved to the front of `p`, for the next block or [`walk_rest`].
    ///
    /// `DEEP`: the nodes are deeper than entry nodes, and not likely in L1 as the few entry
    /// nodes are, so a group asks for its nodes' lines as it enters.
    ///
    /// # Safety
    /// As for [`staged_avx512`]; `p` was filled by [`stage`] from `addrs`, and each of its
    /// nodes is `SEARCHES` searches from its leaf.
    #[inline(always)]
    unsafe fn walk_packed<
        I: AddressInput<u128>,
        const N: bool,
        const SEARCHES: usize,
        const DEEP: bool,
    >(
        v: View<'_, u128, Avx512, false, N>,
        p: &mut Packed,
        states: &mut [Group<u32>; IN_FLIGHT],
        addrs: &[I],
        out: &mut [NextHop],
        miss: NextHop,
    ) {
        let groups = p.len / LANES;
        // `pipeline` has each group enter, take its `SEARCHES - 1` inner steps in order one
        // round apart, then search its leaves, as `advance` and `finish` require.
        pipeline!(groups, SEARCHES, states,
            enter(round, g) {
                g.x.copy_from_slice(&p.x[lanes(round)]);
                g.node.copy_from_slice(&p.node[lanes(round)]);
                if DEEP {
                    for &node in &g.node {
                        // SAFETY: the packed nodes are lines of the table (`stage`).
                        unsafe { v.s.prefetch(v.s.at(v.home, node as usize)) };
                    }
                }
            }
            step(g) {
                // SAFETY: the packed nodes are nodes of the table, each `SEARCHES` searches
                // from its leaf, and the group has taken the steps before this one.
                unsafe { advance(v, g, false) }
            }
            finish(group, g) {
                for (i, &at) in p.at[lanes(group)].iter().enumerate() {
                    let at = at as usize;
                    // SAFETY: the group is at its leaves; the positions in `p.at` are
                    // positions of this batch's blocks, inside `addrs` and `out` (`stage`).
                    unsafe {
                        let addr = v.s.at(addrs, at).address();
                        *v.s.at_mut(out, at) = finish(v, 0, g.node[i], g.x[i], addr, miss);
                    }
                }
            }
        );
        let walked = groups * LANES;
        p.x.copy_within(walked..p.len, 0);
        p.node.copy_within(walked..p.len, 0);
        p.at.copy_within(walked..p.len, 0);
        p.len -= walked;
    }

    /// The lanes [`walk_packed`] left in `p` (fewer than a group), one at a time: the end of
    /// a batch.
    ///
    /// # Safety
    /// As for [`walk_packed`].
    #[inline(always)]
    unsafe fn walk_rest<I: AddressInput<u128>, const N: bool, const SEARCHES: usize>(
        v: View<'_, u128, Avx512, false, N>,
        p: &mut Packed,
        addrs: &[I],
        out: &mut [NextHop],
        miss: NextHop,
    ) {
        for i in 0..p.len {
            let (x, mut node, at) = (p.x[i], p.node[i], p.at[i] as usize);
            // SAFETY: as for `walk_packed`.
            unsafe {
                for _ in 1..SEARCHES {
                    node = step(v, 0, node, x);
                }
                out[at] = finish(v, 0, node, x, addrs[at].address(), miss);
            }
        }
        p.len = 0;
    }

    /// Batched walk with AVX-512 enabled.
    ///
    /// # Safety
    /// `t` satisfies the structure invariants (the token proves the CPU features).
    #[target_feature(enable = "avx512f,avx512bw,popcnt")]
    pub unsafe fn batch_avx512<A: Family, I: AddressInput<A>, O: Output>(
        t: &PlanB<A>,
        s: Avx512,
        addrs: &[I],
        out: &mut [O],
        miss: NextHop,
    ) {
        // SAFETY: caller's contract.
        unsafe { batch(t, s, addrs, out, miss) }
    }

    /// Single walk with AVX-512 enabled.
    ///
    /// # Safety
    /// As for [`batch_avx512`].
    #[target_feature(enable = "avx512f,avx512bw,popcnt")]
    pub unsafe fn one_avx512<A: Family>(t: &PlanB<A>, s: Avx512, addr: A) -> Option<NextHop> {
        // SAFETY: caller's contract.
        unsafe { one(t, s, addr) }
    }

    /// Batched walk with AVX2 enabled.
    ///
    /// # Safety
    /// As for [`batch_avx512`].
    #[target_feature(enable = "avx2,popcnt")]
    pub unsafe fn batch_avx2<A: Family, I: AddressInput<A>, O: Output>(
        t: &PlanB<A>,
        s: Avx2,
        addrs: &[I],
        out: &mut [O],
        miss: NextHop,
    ) {
        // SAFETY: caller's contract.
        unsafe { batch(t, s, addrs, out, miss) }
    }

    /// Single walk with AVX2 enabled.
    ///
    /// # Safety
    /// As for [`batch_avx512`].
    #[target_feature(enable = "avx2,popcnt")]
    pub unsafe fn one_avx2<A: Family>(t: &PlanB<A>, s: Avx2, addr: A) -> Option<NextHop> {
        // SAFETY: caller's contract.
        unsafe { one(t, s, addr) }
    }
}
