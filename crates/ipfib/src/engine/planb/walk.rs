//! The lookup walk, written once for every family and node-search backend.
//!
//! A walk is: direct table → (class 0: the entry is the answer) → the chunk tree's root →
//! `class - 1` inner steps of `node = link + rank` → a leaf search whose rank picks the answer
//! in the same line. A chunk tree is as deep as its own data needs, and its direct entry says
//! how deep (its *class*), so a lookup into a sparse chunk reads fewer lines than one into
//! 2001::/16.
//!
//! The batched walk runs `LANES` independent lookups level by level, so the cache misses of
//! different lanes overlap instead of queueing behind each other (PlanB §3.4). To keep every
//! lane of a group on the same number of steps (no per-lane branch), lookups are *staged* by
//! class as they are read: each class fills its own group, and a full group enters that
//! class's pipeline, whose depth is a constant. Staging is branch-free (a class-0 lookup writes
//! its answer and is not counted; the fill counters of all classes live in one register), so
//! its cost is a few instructions per lookup and no extra line. Each class's pipeline overlaps
//! groups: when a group enters, every group in flight of that class takes one step and the
//! oldest searches its leaves; each step prefetches the line the group needs next, so the line
//! has a round of other work to arrive.
//!
//! Every function that walks is `unsafe`: the SIMD backends index without bounds checks, which
//! is sound only on a structure that satisfies PlanB's invariants (checked by
//! [`super::validate`]; every `PlanB` value does).

use super::layout::{chunk_of, direct_answer, split_entry, Family, Key, Segment, MAX_CLASS};
use super::search::Search;
use super::PlanB;
use crate::route_table::NextHop;

/// What a batch writes per address: an `Option` (no route = `None`) or a plain next hop with
/// the caller's "no route" value, so C and NumPy callers get their layout without a second pass.
pub trait Output: Copy {
    /// The output for an answer, `miss` standing for "no route" where the type needs one.
    fn from_answer(answer: Option<NextHop>, miss: NextHop) -> Self;
}

impl Output for Option<NextHop> {
    #[inline(always)]
    fn from_answer(answer: Option<NextHop>, _miss: NextHop) -> Self {
        answer
    }
}

impl Output for NextHop {
    #[inline(always)]
    fn from_answer(answer: Option<NextHop>, miss: NextHop) -> Self {
        answer.unwrap_or(miss)
    }
}

/// Lookups per group of the batched walk (chosen by measurement, see BENCHMARKS.md: with the
/// per-level pipeline, 32 beat 16 by 14 % on IPv4 tables and by 1–5 % on IPv6 ones).
pub const LANES: usize = 32;

/// One inner step in segment `seg`: the node's link plus the rank of `x` in it.
///
/// # Safety
/// `t` satisfies the structure invariants, `seg` is a segment of `t` and `node` an inner node
/// of it that the walk reached.
#[inline(always)]
unsafe fn step<A: Family, S: Search>(t: &PlanB<A>, s: S, seg: u32, node: u32, x: A::Key) -> u32 {
    // SAFETY: the walk reaches only segments and inner nodes that exist (caller's contract).
    let n = unsafe { s.at(&s.at(&t.segments, seg as usize).lines, node as usize) };
    A::Key::link(n) + A::Key::rank_inner(s, n, x)
}

/// The leaf step: the answer at the rank of `x` in leaf `node` of segment `seg`.
///
/// # Safety
/// `t` satisfies the structure invariants, `seg` is a segment of `t` and `node` a leaf of it
/// that the walk reached.
#[inline(always)]
unsafe fn finish<A: Family, S: Search>(
    t: &PlanB<A>,
    s: S,
    seg: u32,
    node: u32,
    x: A::Key,
    addr: A,
) -> Option<NextHop> {
    // SAFETY: the walk reaches only segments and leaves that exist (caller's contract).
    let segment: &Segment<A> = unsafe { s.at(&t.segments, seg as usize) }.as_ref();
    // SAFETY: as above.
    let leaf = unsafe { s.at(&segment.lines, node as usize) };
    t.answer(segment, leaf, A::Key::rank_leaf(s, leaf, x), addr)
}

/// One lookup.
///
/// # Safety
/// `t` satisfies PlanB's structure invariants ([`super::validate`]).
#[inline(always)]
pub unsafe fn one<A: Family, S: Search>(t: &PlanB<A>, s: S, addr: A) -> Option<NextHop> {
    let coarse = addr.coarse();
    let x = A::Key::from_coarse(coarse);
    // SAFETY: a chunk index is below 2^16 = `direct.len()`; a class > 0 entry names a chunk
    // tree of that depth, and every later index is `link + rank` inside its segment.
    unsafe {
        let (class, payload) = split_entry(*s.at(&t.direct, chunk_of::<A>(coarse)));
        if class == 0 {
            return direct_answer(payload);
        }
        let c = s.at(&t.chunks, payload as usize);
        let mut node = c.root;
        for _ in 1..class {
            node = step(t, s, c.segment, node, x);
        }
        finish(t, s, c.segment, node, x, addr)
    }
}

/// The walk state of one group of `LANES` lookups of one class.
#[derive(Clone)]
struct Group<K> {
    /// Each lane's key bits.
    x: [K; LANES],
    /// Each lane's current node: the chunk root, inner nodes, then its leaf.
    node: [u32; LANES],
    /// Each lane's segment.
    seg: [u32; LANES],
    /// Each lane's position in the batch.
    at: [u32; LANES],
}

impl<K: Key> Group<K> {
    fn new() -> Self {
        Group {
            x: [K::default(); LANES],
            node: [0; LANES],
            seg: [0; LANES],
            at: [0; LANES],
        }
    }
}

/// Pipeline slots of class `d`: one per inner step in flight, one for the leaf search and one
/// being filled. Class `d`'s slots follow those of the classes below it, after slot 0, where
/// class 0 (answered by the direct table) writes and never counts.
const fn first_slot(class: usize) -> usize {
    if class == 0 {
        0
    } else {
        1 + (class - 1) * (class + 2) / 2
    }
}

/// Slots for every class up to `depth`.
const fn slots_for(depth: usize) -> usize {
    first_slot(depth + 1)
}

/// Batches at most this long run in one pass (lane positions are `u32`).
const PASS: usize = 1 << 30;

/// The staging and pipelines of one batch.
struct Batch<'a, A: Family, O> {
    addrs: &'a [A],
    out: &'a mut [O],
    miss: NextHop,
    groups: Vec<Group<A::Key>>,
    /// Groups each class has entered into its pipeline.
    entered: [usize; MAX_CLASS + 1],
    /// Each class's slot being filled.
    stage: [usize; MAX_CLASS + 1],
}

/// Pipeline round of class `D`: the full staged group enters (unless draining), group
/// `r - level` takes inner step `level`, and group `r - D` searches its leaves; each step
/// prefetches the line its lane reads next.
///
/// # Safety
/// `t` satisfies the structure invariants; every staged lane of class `D` is at the root of a
/// tree of depth `D`; `b.groups` has [`slots_for`] `t.depth` slots and `D <= t.depth`.
#[inline(always)]
unsafe fn round<A: Family, S: Search, O: Output, const D: usize>(
    t: &PlanB<A>,
    s: S,
    b: &mut Batch<'_, A, O>,
    r: usize,
) {
    let slot = |g: usize| first_slot(D) + g % (D + 1);
    let entered = b.entered[D];
    for level in 1..D {
        let Some(g) = r.checked_sub(level).filter(|&g| g < entered) else {
            continue;
        };
        // SAFETY: slots of class `D` exist (caller's contract).
        let group = unsafe { s.at_mut(&mut b.groups, slot(g)) };
        for i in 0..LANES {
            // SAFETY: the lane took `level - 1` steps from its root, so it is at an inner
            // node; its child is an inner node or (after the last inner step) a leaf.
            unsafe {
                let seg = group.seg[i];
                group.node[i] = step(t, s, seg, group.node[i], group.x[i]);
                let lines = &s.at(&t.segments, seg as usize).lines;
                s.prefetch(s.at(lines, group.node[i] as usize));
            }
        }
    }
    if let Some(g) = r.checked_sub(D).filter(|&g| g < entered) {
        // SAFETY: as above.
        let group = unsafe { s.at(&b.groups, slot(g)) };
        for i in 0..LANES {
            let at = group.at[i] as usize;
            // SAFETY: the lane took its `D - 1` inner steps, so it is at its leaf; `at` is a
            // position of this pass, below both slices' lengths.
            unsafe {
                let answer = finish(t, s, group.seg[i], group.node[i], group.x[i], *s.at(b.addrs, at));
                *s.at_mut(b.out, at) = O::from_answer(answer, b.miss);
            }
        }
    }
}

/// One round of class `class`'s pipeline (see [`round`]), with the class as a constant.
///
/// # Safety
/// As for [`round`], with `D = class`.
#[inline(always)]
unsafe fn round_of<A: Family, S: Search, O: Output>(
    t: &PlanB<A>,
    s: S,
    b: &mut Batch<'_, A, O>,
    class: usize,
    r: usize,
) {
    // SAFETY: caller's contract.
    unsafe {
        match class {
            1 => round::<A, S, O, 1>(t, s, b, r),
            2 => round::<A, S, O, 2>(t, s, b, r),
            3 => round::<A, S, O, 3>(t, s, b, r),
            4 => round::<A, S, O, 4>(t, s, b, r),
            5 => round::<A, S, O, 5>(t, s, b, r),
            6 => round::<A, S, O, 6>(t, s, b, r),
            _ => round::<A, S, O, 7>(t, s, b, r),
        }
    }
}

/// A batch of any length: `out[i]` gets the answer for `addrs[i]` (the shorter slice bounds
/// the work).
///
/// # Safety
/// `t` satisfies PlanB's structure invariants ([`super::validate`]).
#[inline(always)]
pub unsafe fn batch<A: Family, S: Search, O: Output>(
    t: &PlanB<A>,
    s: S,
    addrs: &[A],
    out: &mut [O],
    miss: NextHop,
) {
    let n = addrs.len().min(out.len());
    if n < 2 * LANES {
        for (a, o) in addrs.iter().zip(out.iter_mut()) {
            // SAFETY: caller's contract.
            *o = O::from_answer(unsafe { one(t, s, *a) }, miss);
        }
        return;
    }
    for (addrs, out) in addrs[..n].chunks(PASS).zip(out[..n].chunks_mut(PASS)) {
        // SAFETY: caller's contract; a pass is at most 2^30 long.
        unsafe { pass(t, s, addrs, out, miss) }
    }
}

/// One pass of at most [`PASS`] lookups (`addrs` and `out` of equal length).
///
/// # Safety
/// As for [`batch`].
#[inline(always)]
unsafe fn pass<A: Family, S: Search, O: Output>(
    t: &PlanB<A>,
    s: S,
    addrs: &[A],
    out: &mut [O],
    miss: NextHop,
) {
    let depth = t.depth;
    let mut b = Batch {
        addrs,
        out,
        miss,
        groups: vec![Group::new(); slots_for(depth)],
        entered: [0; MAX_CLASS + 1],
        stage: std::array::from_fn(first_slot),
    };
    // Lanes filled per class, a byte each (LANES < 256), in one register.
    let mut filled: u64 = 0;
    for (i, &addr) in addrs.iter().enumerate() {
        let coarse = addr.coarse();
        let x = A::Key::from_coarse(coarse);
        // SAFETY: a chunk index is below 2^16 = `direct.len()`; `chunks` is never empty and a
        // class > 0 entry names one of them (structure invariants); `i` is below
        // `out.len()`; every class is at most `depth`, whose slots `groups` has.
        unsafe {
            let (class, payload) = split_entry(*s.at(&t.direct, chunk_of::<A>(coarse)));
            *s.at_mut(b.out, i) = O::from_answer(direct_answer(payload), miss);
            let tree = if class == 0 { 0 } else { payload };
            let c = s.at(&t.chunks, tree as usize);
            let lane = ((filled >> (8 * class)) & 0xff) as usize;
            let group = s.at_mut(&mut b.groups, *s.at(&b.stage, class));
            *s.at_mut(&mut group.x, lane) = x;
            *s.at_mut(&mut group.node, lane) = c.root;
            *s.at_mut(&mut group.seg, lane) = c.segment;
            *s.at_mut(&mut group.at, lane) = i as u32;
            filled += u64::from(class != 0) << (8 * class);
            if lane + 1 == LANES && class != 0 {
                filled &= !(0xff << (8 * class));
                let r = b.entered[class];
                b.entered[class] = r + 1;
                b.stage[class] = first_slot(class) + (r + 1) % (class + 1);
                round_of(t, s, &mut b, class, r);
            }
        }
    }
    for class in 1..=depth {
        // Drain: the groups in flight finish; the partly filled group goes one by one.
        let entered = b.entered[class];
        for r in entered..entered + class {
            // SAFETY: caller's contract; no group enters in these rounds.
            unsafe { round_of(t, s, &mut b, class, r) };
        }
        let lanes = ((filled >> (8 * class)) & 0xff) as usize;
        let group = &b.groups[b.stage[class]];
        for &at in &group.at[..lanes] {
            let at = at as usize;
            // SAFETY: caller's contract.
            b.out[at] = O::from_answer(unsafe { one(t, s, addrs[at]) }, miss);
        }
    }
}

/// The walks compiled with each SIMD instruction set enabled, so the node search inlines.
#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use super::super::search::{avx2::Avx2, avx512::Avx512};
    use super::*;

    /// Batched walk with AVX-512 enabled.
    ///
    /// # Safety
    /// `t` satisfies the structure invariants (the token proves the CPU features).
    #[target_feature(enable = "avx512f,avx512bw,popcnt")]
    pub unsafe fn batch_avx512<A: Family, O: Output>(
        t: &PlanB<A>,
        s: Avx512,
        addrs: &[A],
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
    pub unsafe fn batch_avx2<A: Family, O: Output>(
        t: &PlanB<A>,
        s: Avx2,
        addrs: &[A],
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
