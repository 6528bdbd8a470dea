//! The lookup walks, single and batched, written once for every leaf width and CPU token.
//!
//! A single lookup reads the direct-table entry, then one node per 6 bits until a slot is a
//! leaf, then the leaf and the next hop: the depth varies with the address, so the walk is a
//! loop with a data-dependent exit.
//!
//! Batches take one of two walks (`BatchWalk` in the parent module): [`batch`], interleaved
//! groups, always for deep tries (IPv6), and for shallow ones (IPv4) when many addresses need
//! a node; [`stream`], single walks with each direct entry prefetched [`AHEAD`] addresses
//! early, for shallow tries when most addresses end in the direct table.
//!
//! The interleaved walk overlaps the cache misses of [`LANES`] lookups. A *group* of lanes reads
//! its direct entries (prefetched one group earlier), then takes node steps round by round:
//! each round visits only the lanes still inside nodes (a bit mask, iterated with
//! `trailing_zeros`, so a lane that finished costs nothing and there is no per-lane branch on
//! its state), computes both successors of the step with `popcnt` and selects one without a
//! branch, and prefetches the line the lane reads next (its child node or its leaf). Between a
//! lane's prefetch and its next read the other lanes of the round run, which hides the miss.
//! The leaf and next-hop reads of a group are done after the next group has read its direct
//! entries, so they too have a group's worth of work to arrive.
//!
//! Indexing: the portable walk checks every index (safe code); the x86 walk does not (checked
//! in debug builds), because every index comes from a structure that satisfies the
//! invariants `validate` checks (the builder makes only such structures, and debug builds
//! validate each one), and the checks cost instructions on a path that is
//! instruction-bound once the misses overlap (BENCHMARKS.md).

use std::hint::select_unpredictable;

use super::layout::{Family, LeafWord, Node, LEAF_TAG, STRIDE};
use super::Poptrie;
#[cfg(target_arch = "aarch64")]
use crate::cpu::Neon;
use crate::cpu::Scalar;
use crate::route_table::NextHop;

/// Lookups per group of the batched walk (one bit each in a `u64` mask).
pub const LANES: usize = 32;

/// How a backend's walk reads memory: whether it prefetches, and whether it checks indices.
/// The scalar and NEON tokens take the portable walk (checked indices, no prefetch,
/// `count_ones` as the compiler lowers it for the baseline ISA); the AVX2 and AVX-512 tokens,
/// which prove POPCNT, BMI1 and BMI2 ([`crate::cpu`]), the x86 one (prefetches, unchecked
/// indices). `walk!` implements it with [`Walk`].
pub trait Access: Copy {
    /// Asks for the cache line at `p` (a hint: `p` may point anywhere, it is never read).
    fn prefetch(self, p: *const u8);

    /// `&slice[i]` for an index the walk formed from the structure: checked by the portable
    /// walk (which stays safe code), unchecked by the x86 one (checked in debug builds).
    ///
    /// # Safety
    /// `i < slice.len()`.
    unsafe fn at<T>(self, slice: &[T], i: usize) -> &T;

    /// The walk's name in [`crate::engine::Lookup::describe`]: `portable` or `popcnt+bmi2`.
    fn name(self) -> &'static str;
}

/// The [`Access`] methods of the portable walk: no prefetch, checked indexing.
macro_rules! portable_access {
    () => {
        #[inline(always)]
        fn prefetch(self, _p: *const u8) {}

        #[inline(always)]
        unsafe fn at<T>(self, slice: &[T], i: usize) -> &T {
            &slice[i]
        }

        fn name(self) -> &'static str {
            "portable"
        }
    };
}

/// The arrays a walk reads.
#[derive(Clone, Copy, Debug)]
pub struct View<'t, L> {
    /// Direct-table width `s`.
    pub bits: u32,
    pub direct: &'t [u32],
    pub nodes: &'t [Node],
    pub leaves: &'t [L],
    pub hops: &'t [NextHop],
}

/// What a batch writes per address: an `Option` or a plain next hop with the caller's "no
/// route" value.
pub trait Output: Copy {
    /// The output for next-hop index `index` whose next hop is `hop` (ignored for index 0,
    /// "no route"): a select, no branch.
    fn from_index(index: u32, hop: NextHop, miss: NextHop) -> Self;
}

impl Output for Option<NextHop> {
    #[inline(always)]
    fn from_index(index: u32, hop: NextHop, _miss: NextHop) -> Self {
        (index != 0).then_some(hop)
    }
}

impl Output for NextHop {
    #[inline(always)]
    fn from_index(index: u32, hop: NextHop, miss: NextHop) -> Self {
        if index != 0 {
            hop
        } else {
            miss
        }
    }
}

/// The next-hop index of `addr` (0 = no route).
///
/// # Safety
/// `v` comes from a [`super::Poptrie`] (every one satisfies the invariants `validate`
/// checks, so every index the walk forms is in bounds).
#[inline(always)]
pub unsafe fn one<A: Family, L: LeafWord, C: Access>(v: View<'_, L>, c: C, addr: A) -> u32 {
    // SAFETY: `top` is below 2^s = `direct.len()`; every node index a direct entry or a
    // step gives names a node, and every leaf position a leaf (caller's contract).
    unsafe {
        let d = *c.at(v.direct, addr.top(v.bits));
        if d & LEAF_TAG != 0 {
            return d & !LEAF_TAG;
        }
        let mut idx = d;
        let mut offset = v.bits;
        loop {
            let s = c.at(v.nodes, idx as usize).step(addr.chunk(offset));
            if !s.is_node {
                return c.at(v.leaves, s.leaf as usize).index();
            }
            idx = s.child;
            offset += STRIDE;
        }
    }
}

/// The answer for `addr`.
///
/// # Safety
/// As for [`one`].
#[inline(always)]
pub unsafe fn answer<A: Family, L: LeafWord, C: Access>(
    v: View<'_, L>,
    c: C,
    addr: A,
) -> Option<NextHop> {
    // SAFETY: caller's contract; a next-hop index from the structure is below `hops.len()`.
    unsafe {
        let index = one(v, c, addr);
        (index != 0).then(|| *c.at(v.hops, index as usize))
    }
}

/// [`answer`] kept out of line, for the portable search: inlined into the dispatching
/// `Lookup::lookup`, its register saves made every backend's call pay for them (see PlanB's
/// `walk::one_portable`). The single walks take the trie and its leaves rather than a
/// [`View`]: a `View` passed by value is nine words copied to the stack on every call.
///
/// # Safety
/// As for [`one`].
#[inline(never)]
pub unsafe fn answer_portable<A: Family, L: LeafWord, C: Access>(
    t: &Poptrie<A>,
    leaves: &[L],
    c: C,
    addr: A,
) -> Option<NextHop> {
    // SAFETY: caller's contract.
    unsafe { answer(t.view(leaves), c, addr) }
}

/// The walk state of one group.
#[derive(Clone, Copy)]
struct Group<A> {
    /// Lanes in use (the last group of a batch may be short).
    n: usize,
    /// Per lane: the address (copied, so lane indices from a mask need no bounds check).
    key: [A; LANES],
    /// Per lane: the node it reads next; once it is at a leaf, the leaf's position; for a
    /// lane the direct table answered, the next-hop index.
    pos: [u32; LANES],
    /// Lanes that ended in a node's leaf (the rest were answered by the direct table).
    via_leaf: u64,
}

impl<A: Family> Group<A> {
    const EMPTY: Group<A> = Group {
        n: 0,
        key: [A::ZERO; LANES],
        pos: [0; LANES],
        via_leaf: 0,
    };
}

/// Reads the direct entries of `addrs` (`len <= LANES`) into `g` and prefetches each lane's
/// root node, or its next hop when the direct table answered.
///
/// # Safety
/// As for [`one`].
#[inline(always)]
unsafe fn enter<A: Family, L: LeafWord, C: Access>(
    v: View<'_, L>,
    c: C,
    addrs: &[A],
    g: &mut Group<A>,
) {
    g.n = addrs.len().min(LANES);
    let mut active = 0u64;
    for (i, &a) in addrs.iter().enumerate().take(LANES) {
        // SAFETY: `top` is below 2^s = `direct.len()`.
        let d = unsafe { *c.at(v.direct, a.top(v.bits)) };
        let is_node = d & LEAF_TAG == 0;
        g.key[i] = a;
        g.pos[i] = d & !LEAF_TAG;
        active |= u64::from(is_node) << i;
        let node = v.nodes.as_ptr().wrapping_add(d as usize).cast::<u8>();
        let hop = v.hops.as_ptr().wrapping_add(g.pos[i] as usize).cast::<u8>();
        // Whether a lane needs a node is as random as the trace: a select, not a branch.
        c.prefetch(select_unpredictable(is_node, node, hop));
    }
    g.via_leaf = active;
}

/// Node steps for the lanes of `g` that are in nodes, round by round, until every lane is at
/// a leaf; each step prefetches what the lane reads next. All lanes enter together and each
/// round moves every lane still in a node down one level, so the round gives the offset.
///
/// # Safety
/// As for [`one`], and `g` was filled by [`enter`].
#[inline(always)]
unsafe fn descend<A: Family, L: LeafWord, C: Access>(v: View<'_, L>, c: C, g: &mut Group<A>) {
    let mut active = g.via_leaf;
    let mut offset = v.bits;
    while active != 0 {
        let mut m = active;
        while m != 0 {
            // A set bit of a mask of `LANES` lanes; the `%` keeps the index provably in range.
            let i = m.trailing_zeros() as usize % LANES;
            m &= m - 1;
            // SAFETY: the lane is active, so `pos` is a node index (caller's contract).
            let s = unsafe { c.at(v.nodes, g.pos[i] as usize) }.step(g.key[i].chunk(offset));
            g.pos[i] = select_unpredictable(s.is_node, s.child, s.leaf);
            active &= !(u64::from(!s.is_node) << i);
            let node = v.nodes.as_ptr().wrapping_add(s.child as usize).cast::<u8>();
            let leaf = v.leaves.as_ptr().wrapping_add(s.leaf as usize).cast::<u8>();
            c.prefetch(select_unpredictable(s.is_node, node, leaf));
        }
        offset += STRIDE;
    }
}

/// Reads the leaves and next hops of `g` into `out`. A lane the direct table answered reads
/// leaf 0 instead of a branch (always present, soon cached) and ignores it.
///
/// # Safety
/// As for [`one`], and `g` went through [`descend`].
#[inline(always)]
unsafe fn finish<A, L: LeafWord, C: Access, O: Output>(
    v: View<'_, L>,
    c: C,
    g: &Group<A>,
    out: &mut [O],
    miss: NextHop,
) {
    for (i, o) in out.iter_mut().enumerate().take(g.n) {
        let via_leaf = (g.via_leaf >> i) & 1 != 0;
        // SAFETY: a lane that went through a node holds a leaf position; leaf 0 exists; the
        // index a leaf or a direct entry holds is below `hops.len()` (caller's contract).
        unsafe {
            let leaf = c
                .at(
                    v.leaves,
                    select_unpredictable(via_leaf, g.pos[i], 0) as usize,
                )
                .index();
            let index = select_unpredictable(via_leaf, leaf, g.pos[i]);
            *o = O::from_index(index, *c.at(v.hops, index as usize), miss);
        }
    }
}

/// A batch: `out[i]` gets the answer for `addrs[i]` (the shorter slice bounds the work).
/// Group `k` enters while group `k - 1` waits for its leaves, then group `k - 1` finishes,
/// the direct entries of group `k + 1` are prefetched, and group `k` descends.
///
/// # Safety
/// As for [`one`].
#[inline(always)]
pub unsafe fn batch<A: Family, L: LeafWord, C: Access, O: Output>(
    v: View<'_, L>,
    c: C,
    addrs: &[A],
    out: &mut [O],
    miss: NextHop,
) {
    let n = addrs.len().min(out.len());
    let groups = n.div_ceil(LANES);
    let lanes = |k: usize| k * LANES..((k + 1) * LANES).min(n);
    let mut state = [Group::<A>::EMPTY; 2];
    for k in 0..groups {
        let [a, b] = &mut state;
        let (cur, prev) = if k % 2 == 0 { (a, b) } else { (b, a) };
        // SAFETY: caller's contract; each group enters, descends and finishes in order.
        unsafe {
            enter(v, c, &addrs[lanes(k)], cur);
            if k > 0 {
                finish(v, c, prev, &mut out[lanes(k - 1)], miss);
            }
            if k + 1 < groups {
                for a in &addrs[lanes(k + 1)] {
                    c.prefetch(v.direct.as_ptr().wrapping_add(a.top(v.bits)).cast());
                }
            }
            descend(v, c, cur);
        }
    }
    if groups > 0 {
        let last = &state[(groups - 1) % 2];
        // SAFETY: as above.
        unsafe { finish(v, c, last, &mut out[lanes(groups - 1)], miss) };
    }
}

/// How far ahead [`stream`] prefetches direct-table entries.
const AHEAD: usize = 16;

/// A batch as a stream of single walks, each address's direct entry prefetched [`AHEAD`]
/// addresses early: a fifth of the instructions of [`batch`], and the out-of-order core
/// overlaps the walks as long as their branches predict, which they do when most addresses
/// end in the direct table.
///
/// # Safety
/// As for [`one`].
#[inline(always)]
pub unsafe fn stream<A: Family, L: LeafWord, C: Access, O: Output>(
    v: View<'_, L>,
    c: C,
    addrs: &[A],
    out: &mut [O],
    miss: NextHop,
) {
    let n = addrs.len().min(out.len());
    for i in 0..n {
        if let Some(a) = addrs.get(i + AHEAD) {
            c.prefetch(v.direct.as_ptr().wrapping_add(a.top(v.bits)).cast());
        }
        // SAFETY: caller's contract.
        unsafe {
            let index = one(v, c, addrs[i]);
            out[i] = O::from_index(index, *c.at(v.hops, index as usize), miss);
        }
    }
}

/// A backend's walks, single, interleaved and streamed, compiled with its instruction set:
/// what [`crate::cpu::with_token!`] calls for the table's backend.
pub trait Walk: Access {
    /// The interleaved walk of `addrs` into `out` ([`batch`]).
    ///
    /// # Safety
    /// As for [`one`].
    unsafe fn batch<A: Family, L: LeafWord, O: Output>(
        self,
        v: View<'_, L>,
        addrs: &[A],
        out: &mut [O],
        miss: NextHop,
    );

    /// The stream of prefetched single walks of `addrs` into `out` ([`stream`]).
    ///
    /// # Safety
    /// As for [`one`].
    unsafe fn stream<A: Family, L: LeafWord, O: Output>(
        self,
        v: View<'_, L>,
        addrs: &[A],
        out: &mut [O],
        miss: NextHop,
    );

    /// The answer for `addr` ([`answer`]).
    ///
    /// # Safety
    /// `leaves` are `t`'s.
    unsafe fn answer<A: Family, L: LeafWord>(
        self,
        t: &Poptrie<A>,
        leaves: &[L],
        addr: A,
    ) -> Option<NextHop>;
}

/// Implements [`Access`] for a backend token with the methods macro `$access`
/// (`portable_access` or `x86_access`), and [`Walk`] with its walks `$batch`, `$stream` and
/// `$answer`: functions of the [`Walk`] arguments and the token (the x86 ones compiled with
/// `#[target_feature]`).
macro_rules! walk {
    ($token:ty, $access:ident, $batch:path, $stream:path, $answer:path) => {
        impl Access for $token {
            $access!();
        }

        impl Walk for $token {
            #[inline(always)]
            unsafe fn batch<A: Family, L: LeafWord, O: Output>(
                self,
                v: View<'_, L>,
                addrs: &[A],
                out: &mut [O],
                miss: NextHop,
            ) {
                // SAFETY: caller's contract; the token proves the CPU features.
                unsafe { $batch(v, self, addrs, out, miss) }
            }

            #[inline(always)]
            unsafe fn stream<A: Family, L: LeafWord, O: Output>(
                self,
                v: View<'_, L>,
                addrs: &[A],
                out: &mut [O],
                miss: NextHop,
            ) {
                // SAFETY: caller's contract; the token proves the CPU features.
                unsafe { $stream(v, self, addrs, out, miss) }
            }

            #[inline(always)]
            unsafe fn answer<A: Family, L: LeafWord>(
                self,
                t: &Poptrie<A>,
                leaves: &[L],
                addr: A,
            ) -> Option<NextHop> {
                // SAFETY: caller's contract; the token proves the CPU features.
                unsafe { $answer(t, leaves, self, addr) }
            }
        }
    };
}
walk!(Scalar, portable_access, batch, stream, answer_portable);
#[cfg(target_arch = "aarch64")]
walk!(Neon, portable_access, batch, stream, answer_portable);

/// The walks compiled with POPCNT and BMI enabled, so `count_ones` is one instruction and the
/// node steps inline.
#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use super::*;
    use crate::cpu::{Avx2, Avx512};

    /// The [`Access`] methods of the x86 walk: prefetches, unchecked indexing (checked in
    /// debug builds).
    macro_rules! x86_access {
        () => {
            #[inline(always)]
            fn prefetch(self, p: *const u8) {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                // SAFETY: SSE is part of x86-64, and a prefetch is a hint that never faults,
                // whatever the address.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast()) }
            }

            #[inline(always)]
            unsafe fn at<T>(self, slice: &[T], i: usize) -> &T {
                debug_assert!(i < slice.len(), "walk index {i} of {}", slice.len());
                // SAFETY: the caller guarantees `i < slice.len()`.
                unsafe { slice.get_unchecked(i) }
            }

            fn name(self) -> &'static str {
                "popcnt+bmi2"
            }
        };
    }

    walk!(Avx2, x86_access, batch_x86, stream_x86, answer_x86);
    walk!(Avx512, x86_access, batch_x86, stream_x86, answer_x86);

    /// [`batch`] with the features enabled.
    ///
    /// # Safety
    /// As for [`one`], and the CPU has POPCNT, BMI1 and BMI2 (an AVX2 or AVX-512 token
    /// proves it).
    #[target_feature(enable = "popcnt,bmi1,bmi2")]
    pub unsafe fn batch_x86<A: Family, L: LeafWord, C: Access, O: Output>(
        v: View<'_, L>,
        c: C,
        addrs: &[A],
        out: &mut [O],
        miss: NextHop,
    ) {
        // SAFETY: caller's contract.
        unsafe { batch(v, c, addrs, out, miss) }
    }

    /// [`stream`] with the features enabled.
    ///
    /// # Safety
    /// As for [`batch_x86`].
    #[target_feature(enable = "popcnt,bmi1,bmi2")]
    pub unsafe fn stream_x86<A: Family, L: LeafWord, C: Access, O: Output>(
        v: View<'_, L>,
        c: C,
        addrs: &[A],
        out: &mut [O],
        miss: NextHop,
    ) {
        // SAFETY: caller's contract.
        unsafe { stream(v, c, addrs, out, miss) }
    }

    /// [`answer`] with the features enabled.
    ///
    /// # Safety
    /// As for [`batch_x86`], with `leaves` `t`'s.
    #[target_feature(enable = "popcnt,bmi1,bmi2")]
    pub unsafe fn answer_x86<A: Family, L: LeafWord, C: Access>(
        t: &Poptrie<A>,
        leaves: &[L],
        c: C,
        addr: A,
    ) -> Option<NextHop> {
        // SAFETY: caller's contract.
        unsafe { answer(t.view(leaves), c, addr) }
    }
}
