//! The lookup walks, single and batched, for every leaf width and CPU token.
//!
//! A single lookup reads the direct entry, then one chunk per node (`stride` bits) until a
//! slot is a leaf, then the leaf and the next hop.
//!
//! A batch runs interleaved groups of [`LANES`] lookups, as Poptrie's does: a group reads its
//! direct entries (prefetched one group earlier), then steps round by round through the
//! lanes still in nodes (a bit mask), selecting each successor without a branch and
//! prefetching the chunk or leaf the lane reads next, so the other lanes' work hides the miss.
//! A group's leaves and next hops are read after the next group entered.
//!
//! Indexing: the portable walk checks every index (safe code); the x86 walk does not
//! (checked in debug builds), because every index comes from a structure that satisfies the
//! invariants `validate` checks, which the builder makes and debug builds verify.

use std::hint::select_unpredictable;

use super::layout::{Chunk, Family, LeafWord, LEAF_TAG};
#[cfg(target_arch = "aarch64")]
use crate::cpu::Neon;
use crate::cpu::Scalar;
use crate::route_table::NextHop;

/// Lookups per group of the batched walk.
pub const LANES: usize = 32;

/// The arrays a walk reads.
#[derive(Clone, Copy, Debug)]
pub struct View<'t, L> {
    /// Direct-table width `s`.
    pub bits: u32,
    /// Node stride `k`.
    pub stride: u32,
    pub direct: &'t [u32],
    pub chunks: &'t [Chunk],
    pub leaves: &'t [L],
    pub hops: &'t [NextHop],
}

impl<L> View<'_, L> {
    /// The chunk index of slot `v` of node `node`.
    #[inline(always)]
    fn chunk_of(&self, node: u32, v: u32) -> usize {
        ((node as usize) << (self.stride - 6)) | (v >> 6) as usize
    }
}

/// How a backend's walk reads memory.
pub trait Access: Copy {
    /// Asks for the cache line at `p` (a hint; `p` is never read).
    fn prefetch(self, p: *const u8);

    /// `&slice[i]`: checked by the portable walk, unchecked by the x86 one.
    ///
    /// # Safety
    /// `i < slice.len()`.
    unsafe fn at<T>(self, slice: &[T], i: usize) -> &T;

    /// The walk's name in `describe`.
    fn name(self) -> &'static str;
}

/// What a batch writes per address.
pub trait Output: Copy {
    /// The output for next-hop index `index` (0 = no route) whose hop is `hop`.
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
/// `v` comes from a [`super::CpTrie`] (every index the walk forms is then in bounds).
#[inline(always)]
pub unsafe fn one<A: Family, L: LeafWord, C: Access>(v: View<'_, L>, c: C, addr: A) -> u32 {
    // SAFETY: `top` is below `direct.len()`; node numbers and leaf positions from the
    // structure are in bounds (caller's contract).
    unsafe {
        let d = *c.at(v.direct, addr.top(v.bits));
        if d & LEAF_TAG != 0 {
            return d & !LEAF_TAG;
        }
        let mut node = d;
        let mut offset = v.bits;
        loop {
            let slot = addr.chunk(offset, v.stride);
            let s = c.at(v.chunks, v.chunk_of(node, slot)).step(slot & 63);
            if !s.is_node {
                return c.at(v.leaves, s.leaf as usize).index();
            }
            node = s.child;
            offset += v.stride;
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
    // SAFETY: caller's contract; a next-hop index is below `hops.len()`.
    unsafe {
        let index = one(v, c, addr);
        (index != 0).then(|| *c.at(v.hops, index as usize))
    }
}

/// One group's walk state.
#[derive(Clone, Copy)]
struct Group<A> {
    n: usize,
    key: [A; LANES],
    /// Node number, then leaf position; or the next-hop index the direct table gave.
    pos: [u32; LANES],
    /// Lanes that ended in a node's leaf.
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

/// Reads the direct entries of `addrs` into `g`, prefetching each lane's root chunk (or next
/// hop).
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
        // SAFETY: `top` is below `direct.len()`.
        let d = unsafe { *c.at(v.direct, a.top(v.bits)) };
        let is_node = d & LEAF_TAG == 0;
        g.key[i] = a;
        g.pos[i] = d & !LEAF_TAG;
        active |= u64::from(is_node) << i;
        let slot = a.chunk(v.bits, v.stride);
        let chunk = v
            .chunks
            .as_ptr()
            .wrapping_add(v.chunk_of(d, slot))
            .cast::<u8>();
        let hop = v.hops.as_ptr().wrapping_add(g.pos[i] as usize).cast::<u8>();
        c.prefetch(select_unpredictable(is_node, chunk, hop));
    }
    g.via_leaf = active;
}

/// Node steps for the lanes of `g` in nodes, round by round.
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
            let i = m.trailing_zeros() as usize % LANES;
            m &= m - 1;
            let slot = g.key[i].chunk(offset, v.stride);
            // SAFETY: the lane is active, so `pos` is a node number (caller's contract).
            let s = unsafe { c.at(v.chunks, v.chunk_of(g.pos[i], slot)) }.step(slot & 63);
            g.pos[i] = select_unpredictable(s.is_node, s.child, s.leaf);
            active &= !(u64::from(!s.is_node) << i);
            // The child's chunk for the lane's next slot (a hint; garbage past the end of
            // the address is never read).
            let next = g.key[i].chunk(offset.wrapping_add(v.stride) % u32::from(A::BITS), v.stride);
            let chunk = v
                .chunks
                .as_ptr()
                .wrapping_add(v.chunk_of(s.child, next))
                .cast::<u8>();
            let leaf = v.leaves.as_ptr().wrapping_add(s.leaf as usize).cast::<u8>();
            c.prefetch(select_unpredictable(s.is_node, chunk, leaf));
        }
        offset += v.stride;
    }
}

/// Reads the leaves and next hops of `g` into `out` (a direct-answered lane reads leaf 0 and
/// ignores it).
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
        // SAFETY: leaf positions and leaf 0 exist; indices are below `hops.len()`.
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

/// A batch: `out[i]` gets the answer for `addrs[i]`.
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

/// A backend's walks, compiled with its instruction set.
pub trait Walk: Access {
    /// [`batch`].
    ///
    /// # Safety
    /// As for [`one`].
    unsafe fn run_batch<A: Family, L: LeafWord, O: Output>(
        self,
        v: View<'_, L>,
        addrs: &[A],
        out: &mut [O],
        miss: NextHop,
    );

    /// [`answer`].
    ///
    /// # Safety
    /// As for [`one`].
    unsafe fn run_answer<A: Family, L: LeafWord>(self, v: View<'_, L>, addr: A) -> Option<NextHop>;
}

macro_rules! portable {
    ($token:ty) => {
        impl Access for $token {
            #[inline(always)]
            fn prefetch(self, _p: *const u8) {}

            #[inline(always)]
            unsafe fn at<T>(self, slice: &[T], i: usize) -> &T {
                &slice[i]
            }

            fn name(self) -> &'static str {
                "portable"
            }
        }

        impl Walk for $token {
            unsafe fn run_batch<A: Family, L: LeafWord, O: Output>(
                self,
                v: View<'_, L>,
                addrs: &[A],
                out: &mut [O],
                miss: NextHop,
            ) {
                // SAFETY: caller's contract.
                unsafe { batch(v, self, addrs, out, miss) }
            }

            #[inline(never)]
            unsafe fn run_answer<A: Family, L: LeafWord>(
                self,
                v: View<'_, L>,
                addr: A,
            ) -> Option<NextHop> {
                // SAFETY: caller's contract.
                unsafe { answer(v, self, addr) }
            }
        }
    };
}
portable!(Scalar);
#[cfg(target_arch = "aarch64")]
portable!(Neon);

/// Evaluates `$walk` with `$v` rebound to a copy whose stride is a literal for the strides the
/// defaults and the sweep use (6, 7, 8), so each gets a walk with constant shifts (`View` is
/// copied whole into the inlined walk, and the literal reaches every use); other strides walk
/// with `$v` as it is. dfz10 matched, Zen 4: s=16 k=8 37 -> 46 M/s, s=20 k=6 35 -> 58.
#[cfg(target_arch = "x86_64")]
macro_rules! const_stride {
    ($v:ident => $walk:expr) => {
        match $v.stride {
            6 => {
                let $v = View { stride: 6, ..$v };
                $walk
            }
            7 => {
                let $v = View { stride: 7, ..$v };
                $walk
            }
            8 => {
                let $v = View { stride: 8, ..$v };
                $walk
            }
            _ => $walk,
        }
    };
}

/// The walks compiled with POPCNT and BMI enabled.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::*;
    use crate::cpu::{Avx2, Avx512};

    macro_rules! x86 {
        ($token:ty) => {
            impl Access for $token {
                #[inline(always)]
                fn prefetch(self, p: *const u8) {
                    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                    // SAFETY: SSE is part of x86-64; a prefetch never faults.
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
            }

            impl Walk for $token {
                #[inline(always)]
                unsafe fn run_batch<A: Family, L: LeafWord, O: Output>(
                    self,
                    v: View<'_, L>,
                    addrs: &[A],
                    out: &mut [O],
                    miss: NextHop,
                ) {
                    // SAFETY: caller's contract; the token proves the CPU features.
                    unsafe { batch_x86(v, self, addrs, out, miss) }
                }

                #[inline(always)]
                unsafe fn run_answer<A: Family, L: LeafWord>(
                    self,
                    v: View<'_, L>,
                    addr: A,
                ) -> Option<NextHop> {
                    // SAFETY: caller's contract; the token proves the CPU features.
                    unsafe { answer_x86(v, self, addr) }
                }
            }
        };
    }
    x86!(Avx2);
    x86!(Avx512);

    /// [`batch`] with the features enabled.
    ///
    /// # Safety
    /// As for [`one`], and the CPU has POPCNT, BMI1 and BMI2.
    #[target_feature(enable = "popcnt,bmi1,bmi2")]
    unsafe fn batch_x86<A: Family, L: LeafWord, C: Access, O: Output>(
        v: View<'_, L>,
        c: C,
        addrs: &[A],
        out: &mut [O],
        miss: NextHop,
    ) {
        // SAFETY: caller's contract; only the stride the structure has is passed on.
        unsafe { const_stride!(v => batch(v, c, addrs, out, miss)) }
    }

    /// [`answer`] with the features enabled.
    ///
    /// # Safety
    /// As for [`batch_x86`].
    #[target_feature(enable = "popcnt,bmi1,bmi2")]
    unsafe fn answer_x86<A: Family, L: LeafWord, C: Access>(
        v: View<'_, L>,
        c: C,
        addr: A,
    ) -> Option<NextHop> {
        // SAFETY: caller's contract; only the stride the structure has is passed on.
        unsafe { const_stride!(v => answer(v, c, addr)) }
    }
}
