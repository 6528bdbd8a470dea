//! The lookup walk, written once for every family and node-search backend.
//!
//! A walk is: direct table → entry node of the chunk → `depth - 1` inner steps of
//! `node = link + rank` → a leaf search whose rank picks the answer in the same line. The
//! batched walk runs `LANES` independent lookups level by level, so the cache misses of
//! different lanes overlap instead of queueing behind each other (PlanB §3.4), and every lane
//! does the same steps (no per-lane branches except the rare fallback cell). It is also
//! software-pipelined by one group: a group's leaves are prefetched when its descent ends and
//! searched only after the next group's descent, so the leaf misses (the lines a lookup rarely
//! finds in L1) overlap a whole group's work.

use super::layout::{chunk_of, Family, Key};
use super::search::Search;
use super::PlanB;
use crate::table::NextHop;

/// Lanes interleaved by the batched walk (chosen by measurement, see BENCHMARKS.md: 8, 16 and
/// 32 are within a few percent of each other once the leaves are prefetched; 64 is slower).
pub const LANES: usize = 16;

/// One inner step: the node's link plus the rank of `x` in it.
#[inline(always)]
fn step<A: Family, S: Search>(t: &PlanB<A>, s: S, node: u32, x: A::Key) -> u32 {
    let n = s.at(&t.inner, node as usize);
    A::Key::link(n) + A::Key::rank_inner(s, n, x)
}

/// The leaf step: the answer at the rank of `x` in leaf `node`.
#[inline(always)]
fn finish<A: Family, S: Search>(
    t: &PlanB<A>,
    s: S,
    node: u32,
    x: A::Key,
    addr: A,
) -> Option<NextHop> {
    let leaf = s.at(&t.leaves, node as usize);
    t.answer(leaf, A::Key::rank_leaf(s, leaf, x), addr)
}

/// One lookup.
#[inline(always)]
pub fn one<A: Family, S: Search>(t: &PlanB<A>, s: S, addr: A) -> Option<NextHop> {
    let coarse = addr.coarse();
    let x = A::Key::from_coarse(coarse);
    let mut node = *s.at(&t.direct, chunk_of::<A>(coarse));
    for _ in 1..t.depth {
        node = step(t, s, node, x);
    }
    finish(t, s, node, x, addr)
}

/// The state of one group of `LANES` lookups between its descent and its leaf search.
struct Group<K> {
    /// Each lane's key bits.
    x: [K; LANES],
    /// Each lane's node: its entry node, then after the descent its leaf.
    node: [u32; LANES],
}

impl<K: Key> Group<K> {
    fn new() -> Self {
        Group {
            x: [K::default(); LANES],
            node: [0; LANES],
        }
    }
}

/// The inner steps of `LANES` interleaved lookups through trees of `DEPTH` steps (a constant,
/// so the level loop unrolls), leaving each lane's leaf index in `g` and its line on its way
/// into the cache.
#[inline(always)]
fn descend<A: Family, S: Search, const DEPTH: usize>(
    t: &PlanB<A>,
    s: S,
    addrs: &[A; LANES],
    g: &mut Group<A::Key>,
) {
    for (i, addr) in addrs.iter().enumerate() {
        let coarse = addr.coarse();
        g.x[i] = A::Key::from_coarse(coarse);
        g.node[i] = *s.at(&t.direct, chunk_of::<A>(coarse));
    }
    for level in 1..DEPTH {
        for i in 0..LANES {
            g.node[i] = step(t, s, g.node[i], g.x[i]);
            if level + 1 == DEPTH {
                s.prefetch(s.at(&t.leaves, g.node[i] as usize));
            }
        }
    }
}

/// The leaf searches of a descended group.
#[inline(always)]
fn finish_group<A: Family, S: Search>(
    t: &PlanB<A>,
    s: S,
    g: &Group<A::Key>,
    addrs: &[A; LANES],
    out: &mut [Option<NextHop>; LANES],
) {
    for i in 0..LANES {
        out[i] = finish(t, s, g.node[i], g.x[i], addrs[i]);
    }
}

/// A batch of any length for trees of `DEPTH` steps: full groups of `LANES`, each group's leaf
/// searches after the next group's descent, then single lookups for the rest.
#[inline(always)]
fn batch_of_depth<A: Family, S: Search, const DEPTH: usize>(
    t: &PlanB<A>,
    s: S,
    addrs: &[A],
    out: &mut [Option<NextHop>],
) {
    let mut groups = addrs.chunks_exact(LANES);
    let mut outs = out.chunks_exact_mut(LANES);
    let mut states = [Group::new(), Group::new()];
    let mut pending: Option<(&[A; LANES], &mut [Option<NextHop>; LANES])> = None;
    for (k, (a, o)) in (&mut groups).zip(&mut outs).enumerate() {
        let a: &[A; LANES] = a.try_into().expect("chunks_exact yields LANES");
        let o: &mut [Option<NextHop>; LANES] = o.try_into().expect("chunks_exact yields LANES");
        let [even, odd] = &mut states;
        let (current, previous) = if k % 2 == 0 { (even, odd) } else { (odd, even) };
        descend::<A, S, DEPTH>(t, s, a, current);
        if let Some((pa, po)) = pending.take() {
            finish_group(t, s, previous, pa, po);
        }
        pending = Some((a, o));
    }
    if let Some((pa, po)) = pending {
        let last = (addrs.len() / LANES - 1) % 2;
        finish_group(t, s, &states[last], pa, po);
    }
    for (a, o) in groups.remainder().iter().zip(outs.into_remainder()) {
        *o = one(t, s, *a);
    }
}

/// A batch of any length. The depth is fixed per table (at most 6 for any table whose node
/// indices fit 32 bits), so this match runs once per batch and the walk it picks has the depth
/// as a constant.
#[inline(always)]
pub fn batch<A: Family, S: Search>(t: &PlanB<A>, s: S, addrs: &[A], out: &mut [Option<NextHop>]) {
    match t.depth {
        1 => batch_of_depth::<A, S, 1>(t, s, addrs, out),
        2 => batch_of_depth::<A, S, 2>(t, s, addrs, out),
        3 => batch_of_depth::<A, S, 3>(t, s, addrs, out),
        4 => batch_of_depth::<A, S, 4>(t, s, addrs, out),
        5 => batch_of_depth::<A, S, 5>(t, s, addrs, out),
        6 => batch_of_depth::<A, S, 6>(t, s, addrs, out),
        _ => {
            for (a, o) in addrs.iter().zip(out.iter_mut()) {
                *o = one(t, s, *a);
            }
        }
    }
}

/// The walks compiled with each SIMD instruction set enabled, so the node search inlines.
#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use super::super::search::{avx2::Avx2, avx512::Avx512};
    use super::*;

    /// Batched walk with AVX-512 enabled.
    #[target_feature(enable = "avx512f,avx512bw,popcnt")]
    pub fn batch_avx512<A: Family>(
        t: &PlanB<A>,
        s: Avx512,
        addrs: &[A],
        out: &mut [Option<NextHop>],
    ) {
        batch(t, s, addrs, out)
    }

    /// Single walk with AVX-512 enabled.
    #[target_feature(enable = "avx512f,avx512bw,popcnt")]
    pub fn one_avx512<A: Family>(t: &PlanB<A>, s: Avx512, addr: A) -> Option<NextHop> {
        one(t, s, addr)
    }

    /// Batched walk with AVX2 enabled.
    #[target_feature(enable = "avx2,popcnt")]
    pub fn batch_avx2<A: Family>(t: &PlanB<A>, s: Avx2, addrs: &[A], out: &mut [Option<NextHop>]) {
        batch(t, s, addrs, out)
    }

    /// Single walk with AVX2 enabled.
    #[target_feature(enable = "avx2,popcnt")]
    pub fn one_avx2<A: Family>(t: &PlanB<A>, s: Avx2, addr: A) -> Option<NextHop> {
        one(t, s, addr)
    }
}
