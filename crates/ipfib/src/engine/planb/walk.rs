//! The lookup walk, written once for every family and node-search backend.
//!
//! A walk is: direct table → the chunk's class (its tree's depth) and entry node → `class - 1`
//! inner steps of `node = link + rank` → a leaf search whose rank picks the answer in the same
//! line; class 0 is answered by the direct entry itself. Depth follows the data, so the
//! batched walk first sorts each block of addresses by class (a counting sort of positions)
//! and then walks each class with its depth as a constant: lanes walking together take the
//! same steps (no per-lane branches except the rare fallback cell). Within a class it runs
//! `LANES` independent lookups level by level, so the cache misses of different lanes overlap
//! instead of queueing behind each other (PlanB §3.4). Groups are also
//! software-pipelined: in each round one group enters, every group in flight takes one step,
//! and the oldest searches its leaf; each step prefetches the line the group needs next, so
//! that line has a whole round of other groups' work to arrive. The deep levels (the last
//! inner level and the leaves) are where lookups miss L1, and the prefetch distance of a round
//! hides most of those misses.
//!
//! Every function that walks is `unsafe`: the SIMD backends index without bounds checks, which
//! is sound only on a structure that satisfies PlanB's invariants (checked by
//! [`super::validate`]; every `PlanB` value does).

use super::layout::{chunk_of, class_of, direct_answer, Family, Key, MAX_CLASS, PAYLOAD};
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

/// One inner step: the node's link plus the rank of `x` in it.
///
/// # Safety
/// `t` satisfies the structure invariants and `node` is an inner node the walk reached.
#[inline(always)]
unsafe fn step<A: Family, S: Search>(t: &PlanB<A>, s: S, node: u32, x: A::Key) -> u32 {
    // SAFETY: the walk reaches only inner nodes that exist (caller's contract).
    let n = unsafe { s.at(&t.inner, node as usize) };
    A::Key::link(n) + A::Key::rank_inner(s, n, x)
}

/// The leaf step: the answer at the rank of `x` in leaf `node`.
///
/// # Safety
/// `t` satisfies the structure invariants and `node` is a leaf the walk reached.
#[inline(always)]
unsafe fn finish<A: Family, S: Search>(
    t: &PlanB<A>,
    s: S,
    node: u32,
    x: A::Key,
    addr: A,
) -> Option<NextHop> {
    // SAFETY: the walk reaches only leaves that exist (caller's contract).
    let leaf = unsafe { s.at(&t.leaves, node as usize) };
    t.answer(leaf, A::Key::rank_leaf(s, leaf, x), addr)
}

/// One lookup: the direct entry's class says how many node searches follow (single lookups
/// may branch on it; the batched walk groups lanes by it instead).
///
/// # Safety
/// `t` satisfies PlanB's structure invariants ([`super::validate`]).
#[inline(always)]
pub unsafe fn one<A: Family, S: Search>(t: &PlanB<A>, s: S, addr: A) -> Option<NextHop> {
    let coarse = addr.coarse();
    let x = A::Key::from_coarse(coarse);
    // SAFETY: a chunk index is below 2^16 = `direct.len()`; every later index is an entry's
    // node or `link + rank` of a valid structure, in bounds by its invariants.
    unsafe {
        let e = *s.at(&t.direct, chunk_of::<A>(coarse));
        let class = class_of(e);
        if class == 0 {
            return direct_answer(e);
        }
        let mut node = e & PAYLOAD;
        for _ in 1..class {
            node = step(t, s, node, x);
        }
        finish(t, s, node, x, addr)
    }
}

/// Addresses a batch sorts by class at a time (the lanes of one block are walked class by
/// class; the sort's arrays stay in L1).
pub const BLOCK: usize = 1024;

/// The deepest class the batched walk has a pipeline for; deeper chunks (no real table makes
/// them) are looked up one by one.
pub const MAX_BATCHED_CLASS: usize = 6;

/// Slots of the sorted arrays: each class's region is rounded up to whole groups.
const SORTED: usize = BLOCK + (MAX_CLASS + 1) * LANES;

/// The working arrays of a batch, made once per batch (zeroing them per block cost 11
/// instructions per lookup). The sort writes each lane's walk state straight into its slot of
/// the sorted arrays, which the walk then updates in place: a group is 32 consecutive slots,
/// read with plain loads (gathering lanes through a position array made LLVM emit AVX-512
/// gathers, which are slow here).
struct Scratch<K> {
    /// Each position's direct entry.
    entries: [u32; BLOCK],
    /// Sorted by class: each slot's position in the block.
    order: [u16; SORTED],
    /// Sorted by class: each slot's key bits.
    xs: [K; SORTED],
    /// Sorted by class: each slot's current node (entry node, inner nodes, then leaf).
    nodes: [u32; SORTED],
}

/// Group `g` of a slice of slots, as an array.
#[inline(always)]
fn group<T>(slots: &[T], g: usize) -> &[T; LANES] {
    slots[g * LANES..(g + 1) * LANES]
        .try_into()
        .expect("whole groups")
}

/// Group `g` of a slice of slots, as a mutable array.
#[inline(always)]
fn group_mut<T>(slots: &mut [T], g: usize) -> &mut [T; LANES] {
    (&mut slots[g * LANES..(g + 1) * LANES])
        .try_into()
        .expect("whole groups")
}

/// Pipeline stage `level` (`1..CLASS`): one inner step for every lane of a group, then a
/// prefetch of the line the next stage reads (an inner node, or after the last inner level
/// the leaf).
///
/// # Safety
/// `t` satisfies the structure invariants, every lane is in a chunk of class `CLASS` and has
/// taken exactly `level - 1` inner steps from its entry node.
#[inline(always)]
unsafe fn advance<A: Family, S: Search, const CLASS: usize>(
    t: &PlanB<A>,
    s: S,
    level: usize,
    x: &[A::Key; LANES],
    node: &mut [u32; LANES],
) {
    for i in 0..LANES {
        // SAFETY: the lane is at an inner node of this level (caller's contract), and its
        // child is an inner node, or a leaf after the last inner level.
        unsafe {
            node[i] = step(t, s, node[i], x[i]);
            if level + 1 == CLASS {
                s.prefetch(s.at(&t.leaves, node[i] as usize));
            } else {
                s.prefetch(s.at(&t.inner, node[i] as usize));
            }
        }
    }
}

/// Pipeline stage `CLASS`: the leaf searches of a group, each answer written to its lane's
/// position.
///
/// # Safety
/// `t` satisfies the structure invariants, every lane is at its leaf, and every lane's
/// position is below `addrs.len()` and `out.len()`.
#[inline(always)]
unsafe fn finish_group<A: Family, S: Search, O: Output>(
    t: &PlanB<A>,
    s: S,
    (at, x, node): (&[u16; LANES], &[A::Key; LANES], &[u32; LANES]),
    addrs: &[A],
    out: &mut [O],
    miss: NextHop,
) {
    for i in 0..LANES {
        let at = at[i] as usize;
        // SAFETY: the lane is at a leaf and its position is in bounds (caller's contract).
        unsafe {
            let answer = finish(t, s, node[i], x[i], *s.at(addrs, at));
            *s.at_mut(out, at) = O::from_answer(answer, miss);
        }
    }
}

/// The slots of one class (whole groups of `LANES`; a class's last group is completed with
/// copies of its last lane, whose answer is then written more than once), walked with the
/// class a constant so the level loops unroll. In round `r`, group `r` takes its first inner
/// step, group `r - level + 1` inner step `level`, and group `r - CLASS + 1` searches its
/// leaves: a group's next line has a round of other groups' work to arrive.
///
/// # Safety
/// `t` satisfies the structure invariants; `at`, `x` and `node` have the same length, a
/// multiple of `LANES`; every position in `at` is below `addrs.len()` and `out.len()`, and
/// names an address of a chunk of class `CLASS` whose key bits and entry node are in `x` and
/// `node`.
#[inline(always)]
unsafe fn class_walk<A: Family, S: Search, O: Output, const CLASS: usize>(
    t: &PlanB<A>,
    s: S,
    addrs: &[A],
    (at, x, node): (&[u16], &[A::Key], &mut [u32]),
    out: &mut [O],
    miss: NextHop,
) {
    const { assert!(CLASS >= 1 && CLASS <= MAX_BATCHED_CLASS) };
    let groups = at.len() / LANES;
    for round in 0..groups + CLASS - 1 {
        // SAFETY: each group takes its `CLASS - 1` inner steps in order one round apart, then
        // searches its leaves, as `advance` and `finish_group` require; positions are in
        // bounds and of this class (caller's contract).
        unsafe {
            for level in 1..CLASS {
                if let Some(g) = (round + 1).checked_sub(level).filter(|&g| g < groups) {
                    advance::<A, S, CLASS>(t, s, level, group(x, g), group_mut(node, g));
                }
            }
            if let Some(g) = (round + 1).checked_sub(CLASS).filter(|&g| g < groups) {
                let lanes = (group(at, g), group(x, g), group(node, g));
                finish_group(t, s, lanes, addrs, out, miss);
            }
        }
    }
}

/// One block (at most [`BLOCK`] addresses): each address's direct entry, a counting sort of
/// the positions by class that writes each lane's walk state into its class's slots, then
/// each class walked on its own with its depth as a constant. Class-0 lanes are answered by
/// their entry; classes deeper than [`MAX_BATCHED_CLASS`] are looked up one by one.
///
/// # Safety
/// `t` satisfies the structure invariants; `addrs.len() == out.len() <= BLOCK`.
#[inline(always)]
unsafe fn block<A: Family, S: Search, O: Output>(
    t: &PlanB<A>,
    s: S,
    addrs: &[A],
    out: &mut [O],
    miss: NextHop,
    scratch: &mut Scratch<A::Key>,
) {
    debug_assert!(addrs.len() == out.len() && addrs.len() <= BLOCK);
    let n = addrs.len().min(out.len()).min(BLOCK);
    let (addrs, out) = (&addrs[..n], &mut out[..n]);
    let Scratch {
        entries,
        order,
        xs,
        nodes,
    } = scratch;
    let entries = &mut entries[..n];
    // Counters and cursors live in registers, four 16-bit fields per `u64` (classes 0..=3 in
    // `lo`, 4..=7 in `hi`), so the sort has no read-modify-write of memory (a counter array in
    // memory made the sort cost as much as the walk: each update waited on the last one).
    let field = |c: usize| -> (u64, u64) {
        let inc = 1u64 << ((c & 3) * 16);
        let high = ((c >> 2) as u64).wrapping_neg();
        (inc & !high, inc & high)
    };
    let (mut lo, mut hi) = (0u64, 0u64);
    for (e, a) in entries.iter_mut().zip(addrs) {
        // SAFETY: a chunk index is below 2^16 = `direct.len()`.
        *e = unsafe { *s.at(&t.direct, chunk_of::<A>(a.coarse())) };
        let (l, h) = field(class_of(*e));
        lo += l;
        hi += h;
    }
    // Class `c`'s slots are `start[c]..start[c] + len[c]`, `len[c]` its lanes rounded up to
    // whole groups; the cursors start at `start`.
    let mut start = [0usize; MAX_CLASS + 1];
    let mut len = [0usize; MAX_CLASS + 1];
    let mut filled = [0usize; MAX_CLASS + 1];
    let (mut clo, mut chi) = (0u64, 0u64);
    let mut at = 0usize;
    for c in 0..=MAX_CLASS {
        let packed = if c < 4 { lo } else { hi };
        let count = ((packed >> ((c & 3) * 16)) & 0xffff) as usize;
        start[c] = at;
        filled[c] = at + count;
        len[c] = count.next_multiple_of(LANES);
        let cursor = (at as u64) << ((c & 3) * 16);
        if c < 4 {
            clo |= cursor;
        } else {
            chi |= cursor;
        }
        at += len[c];
    }
    for (i, (&e, a)) in entries.iter().zip(addrs).enumerate() {
        let c = class_of(e);
        let packed = if c < 4 { clo } else { chi };
        let j = ((packed >> ((c & 3) * 16)) & 0xffff) as usize;
        let (l, h) = field(c);
        clo += l;
        chi += h;
        // SAFETY: class `c`'s cursor starts at `start[c]` and is bumped once per lane of the
        // class, so it stays below `filled[c] <= start[c] + len[c] <= SORTED`.
        unsafe {
            *s.at_mut(order, j) = i as u16;
            *s.at_mut(xs, j) = A::Key::from_coarse(a.coarse());
            *s.at_mut(nodes, j) = e & PAYLOAD;
        }
    }
    // Complete each class's last group with copies of its last lane.
    for c in 0..=MAX_CLASS {
        let filled = filled[c];
        for j in filled..start[c] + len[c] {
            order[j] = order[filled - 1];
            xs[j] = xs[filled - 1];
            nodes[j] = nodes[filled - 1];
        }
    }
    let slots = |c: usize| start[c]..start[c] + len[c];
    for j in slots(0) {
        let i = usize::from(order[j]);
        out[i] = O::from_answer(direct_answer(nodes[j]), miss);
    }
    // SAFETY: every position is below `n`, which bounds `addrs` and `out`, and `slots(c)`
    // holds exactly the lanes of class `c` (and copies of them), in whole groups.
    unsafe {
        macro_rules! walk {
            ($($c:literal)*) => {$(
                if len[$c] > 0 {
                    let r = slots($c);
                    let lanes = (&order[r.clone()], &xs[r.clone()], &mut nodes[r]);
                    class_walk::<A, S, O, $c>(t, s, addrs, lanes, out, miss);
                }
            )*};
        }
        walk!(1 2 3 4 5 6);
        for c in MAX_BATCHED_CLASS + 1..=MAX_CLASS {
            for j in slots(c) {
                let i = usize::from(order[j]);
                out[i] = O::from_answer(one(t, s, addrs[i]), miss);
            }
        }
    }
}

/// A batch: `out[i]` gets the answer for `addrs[i]` (the shorter slice bounds the work), one
/// [`BLOCK`] at a time; a batch shorter than one group is looked up one by one.
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
    if n < LANES {
        // Too few for one group: single lookups (a padded group would walk 32 lanes).
        for (a, o) in addrs[..n].iter().zip(&mut out[..n]) {
            // SAFETY: caller's contract.
            *o = O::from_answer(unsafe { one(t, s, *a) }, miss);
        }
        return;
    }
    let mut scratch = Scratch {
        entries: [0; BLOCK],
        order: [0; SORTED],
        xs: [A::Key::default(); SORTED],
        nodes: [0; SORTED],
    };
    for (a, o) in addrs[..n].chunks(BLOCK).zip(out[..n].chunks_mut(BLOCK)) {
        // SAFETY: caller's contract; the chunks have equal lengths of at most `BLOCK`.
        unsafe { block(t, s, a, o, miss, &mut scratch) };
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
