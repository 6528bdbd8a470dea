//! The lookup walks, single and batched, written once for every leaf width and CPU token.
//!
//! A single lookup reads the direct-table entry, then one node per 6 bits until a slot is a
//! leaf, then the leaf and the next hop: the depth varies with the address, so the walk is a
//! loop with a data-dependent exit.
//!
//! The batched walk overlaps the cache misses of [`LANES`] lookups. A *group* of lanes reads
//! its direct entries (prefetched one group earlier), then takes node steps round by round:
//! each round visits only the lanes still inside nodes (a bit mask, iterated with
//! `trailing_zeros`, so a lane that finished costs nothing and there is no per-lane branch on
//! its state), computes both successors of the step with `popcnt` and selects one without a
//! branch, and prefetches the line the lane reads next (its child node or its leaf). Between a
//! lane's prefetch and its next read the other lanes of the round run, which hides the miss.
//! The leaf and next-hop reads of a group are done after the next group has read its direct
//! entries, so they too have a group's worth of work to arrive.
//!
//! Indexing is checked (safe code): every index comes from the structure, and the checks cost
//! a compare and a predicted branch each (BENCHMARKS.md has the measurement).

use std::hint::select_unpredictable;

use super::layout::{Family, LeafWord, Node, LEAF_TAG, STRIDE};
use crate::route_table::NextHop;

/// Lookups per group of the batched walk (one bit each in a `u64` mask).
pub const LANES: usize = 32;

/// Proof of what the CPU runs, and the prefetch it allows.
pub trait Cpu: Copy {
    /// Asks for the cache line at `p` (a hint: `p` may point anywhere, it is never read).
    fn prefetch(self, p: *const u8);
}

/// Portable code: no prefetch, `count_ones` as the compiler lowers it for the baseline ISA.
#[derive(Clone, Copy, Debug)]
pub struct Portable;

impl Cpu for Portable {
    #[inline(always)]
    fn prefetch(self, _p: *const u8) {}
}

/// x86-64 with POPCNT and BMI1/2 (variable shifts without the `cl` register); holding one
/// proves the CPU has them.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub struct X86(());

#[cfg(target_arch = "x86_64")]
impl X86 {
    /// The token, if this CPU has the features.
    pub fn new() -> Option<Self> {
        (is_x86_feature_detected!("popcnt")
            && is_x86_feature_detected!("bmi1")
            && is_x86_feature_detected!("bmi2"))
        .then_some(X86(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl Cpu for X86 {
    #[inline(always)]
    fn prefetch(self, p: *const u8) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of x86-64, and a prefetch is a hint that never faults, whatever
        // the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast()) }
    }
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
#[inline(always)]
pub fn one<A: Family, L: LeafWord>(v: View<'_, L>, addr: A) -> u32 {
    let d = v.direct[addr.top(v.bits)];
    if d & LEAF_TAG != 0 {
        return d & !LEAF_TAG;
    }
    let mut idx = d;
    let mut offset = v.bits;
    loop {
        let s = v.nodes[idx as usize].step(addr.chunk(offset));
        if !s.is_node {
            return v.leaves[s.leaf as usize].index();
        }
        idx = s.child;
        offset += STRIDE;
    }
}

/// The answer for `addr`.
#[inline(always)]
pub fn answer<A: Family, L: LeafWord>(v: View<'_, L>, addr: A) -> Option<NextHop> {
    let index = one(v, addr);
    (index != 0).then(|| v.hops[index as usize])
}

/// The walk state of one group.
#[derive(Clone, Copy)]
struct Group<A> {
    /// Lanes in use (the last group of a batch may be short).
    n: usize,
    /// Per lane: the address (copied, so lane indices from a mask need no bounds check).
    key: [A; LANES],
    /// Per lane: the next-hop index (answered by the direct table), or the leaf position.
    hop: [u32; LANES],
    /// Per lane: the node it reads next.
    idx: [u32; LANES],
    /// Per lane: the offset of that node's 6 bits.
    offset: [u32; LANES],
    /// Lanes that ended in a node's leaf (the rest were answered by the direct table).
    via_leaf: u64,
}

impl<A: Family> Group<A> {
    const EMPTY: Group<A> = Group {
        n: 0,
        key: [A::ZERO; LANES],
        hop: [0; LANES],
        idx: [0; LANES],
        offset: [0; LANES],
        via_leaf: 0,
    };
}

/// Reads the direct entries of `addrs` (`len <= LANES`) into `g` and prefetches each lane's
/// root node, or its next hop when the direct table answered.
#[inline(always)]
fn enter<A: Family, L: LeafWord, C: Cpu>(v: View<'_, L>, c: C, addrs: &[A], g: &mut Group<A>) {
    g.n = addrs.len().min(LANES);
    let mut active = 0u64;
    for (i, &a) in addrs.iter().enumerate().take(LANES) {
        let d = v.direct[a.top(v.bits)];
        let is_node = d & LEAF_TAG == 0;
        g.key[i] = a;
        g.idx[i] = d;
        g.hop[i] = d & !LEAF_TAG;
        g.offset[i] = v.bits;
        active |= u64::from(is_node) << i;
        let node = v.nodes.as_ptr().wrapping_add(d as usize).cast::<u8>();
        let hop = v.hops.as_ptr().wrapping_add(g.hop[i] as usize).cast::<u8>();
        // Whether a lane needs a node is as random as the trace: a select, not a branch.
        c.prefetch(select_unpredictable(is_node, node, hop));
    }
    g.via_leaf = active;
}

/// Node steps for the lanes of `g` that are in nodes, round by round, until every lane is at
/// a leaf; each step prefetches what the lane reads next.
#[inline(always)]
fn descend<A: Family, L: LeafWord, C: Cpu>(v: View<'_, L>, c: C, g: &mut Group<A>) {
    let mut active = g.via_leaf;
    while active != 0 {
        let mut m = active;
        while m != 0 {
            // A set bit of a mask of `LANES` lanes; the mask keeps the index provably in range.
            let i = m.trailing_zeros() as usize % LANES;
            m &= m - 1;
            let s = v.nodes[g.idx[i] as usize].step(g.key[i].chunk(g.offset[i]));
            g.idx[i] = s.child;
            g.hop[i] = s.leaf;
            g.offset[i] += STRIDE;
            active &= !(u64::from(!s.is_node) << i);
            let node = v.nodes.as_ptr().wrapping_add(s.child as usize).cast::<u8>();
            let leaf = v.leaves.as_ptr().wrapping_add(s.leaf as usize).cast::<u8>();
            c.prefetch(select_unpredictable(s.is_node, node, leaf));
        }
    }
}

/// Reads the leaves and next hops of `g` into `out`. A lane the direct table answered reads
/// leaf 0 instead of a branch (always present, soon cached) and ignores it.
#[inline(always)]
fn finish<A, L: LeafWord, O: Output>(v: View<'_, L>, g: &Group<A>, out: &mut [O], miss: NextHop) {
    for (i, o) in out.iter_mut().enumerate().take(g.n) {
        let via_leaf = (g.via_leaf >> i) & 1 != 0;
        let leaf = v.leaves[select_unpredictable(via_leaf, g.hop[i], 0) as usize].index();
        let index = select_unpredictable(via_leaf, leaf, g.hop[i]);
        *o = O::from_index(index, v.hops[index as usize], miss);
    }
}

/// A batch: `out[i]` gets the answer for `addrs[i]` (the shorter slice bounds the work).
/// Group `k` enters while group `k - 1` waits for its leaves, then group `k - 1` finishes,
/// the direct entries of group `k + 1` are prefetched, and group `k` descends.
#[inline(always)]
pub fn batch<A: Family, L: LeafWord, C: Cpu, O: Output>(
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
        let (cur, prev) = if k % 2 == 0 {
            let [a, b] = &mut state;
            (a, b)
        } else {
            let [a, b] = &mut state;
            (b, a)
        };
        enter(v, c, &addrs[lanes(k)], cur);
        if k > 0 {
            finish(v, prev, &mut out[lanes(k - 1)], miss);
        }
        if k + 1 < groups {
            for a in &addrs[lanes(k + 1)] {
                c.prefetch(v.direct.as_ptr().wrapping_add(a.top(v.bits)).cast());
            }
        }
        descend(v, c, cur);
    }
    if groups > 0 {
        finish(
            v,
            &state[(groups - 1) % 2],
            &mut out[lanes(groups - 1)],
            miss,
        );
    }
}

/// The walks compiled with POPCNT and BMI enabled, so `count_ones` is one instruction and the
/// node steps inline.
#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use super::*;

    /// [`batch`] with the features enabled.
    #[target_feature(enable = "popcnt,bmi1,bmi2")]
    pub fn batch_x86<A: Family, L: LeafWord, O: Output>(
        v: View<'_, L>,
        c: X86,
        addrs: &[A],
        out: &mut [O],
        miss: NextHop,
    ) {
        batch(v, c, addrs, out, miss)
    }

    /// [`answer`] with the features enabled.
    #[target_feature(enable = "popcnt,bmi1,bmi2")]
    pub fn answer_x86<A: Family, L: LeafWord>(v: View<'_, L>, addr: A) -> Option<NextHop> {
        answer(v, addr)
    }
}
