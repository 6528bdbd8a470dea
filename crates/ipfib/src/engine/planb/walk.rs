//! The lookup walk, written once for every family and node-search backend.
//!
//! A walk is: direct table → entry node of the chunk → `depth - 1` inner steps of
//! `node = link + rank` → a leaf search whose rank picks the answer in the same line. The
//! batched walk runs `LANES` independent lookups level by level, so the cache misses of
//! different lanes overlap instead of queueing behind each other (PlanB §3.4), and every lane
//! does the same steps (no per-lane branches except the rare fallback cell). Groups are also
//! software-pipelined: in each round one group enters, every group in flight takes one step,
//! and the oldest searches its leaf; each step prefetches the line the group needs next, so
//! that line has a whole round of other groups' work to arrive. The deep levels (the last
//! inner level and the leaves) are where lookups miss L1, and the prefetch distance of a round
//! hides most of those misses.

use super::layout::{chunk_of, Family, Key};
use super::search::Search;
use super::PlanB;
use crate::table::NextHop;

/// Lookups per group of the batched walk (chosen by measurement, see BENCHMARKS.md: with the
/// per-level pipeline, 32 beat 16 by 14 % on IPv4 tables and by 1–5 % on IPv6 ones).
pub const LANES: usize = 32;

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

/// The walk state of one group of `LANES` lookups as it moves through the pipeline.
struct Group<K> {
    /// Each lane's key bits.
    x: [K; LANES],
    /// Each lane's current node: its entry node, inner nodes, then its leaf.
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

/// Groups a pipelined batch keeps in flight at most: one per step of the deepest walk the
/// batched path takes (depth 6) and one entering.
const IN_FLIGHT: usize = 8;

/// Pipeline stage 0: each lane's key bits and entry node.
#[inline(always)]
fn enter<A: Family, S: Search>(t: &PlanB<A>, s: S, addrs: &[A], g: &mut Group<A::Key>) {
    for (i, addr) in addrs.iter().take(LANES).enumerate() {
        let coarse = addr.coarse();
        g.x[i] = A::Key::from_coarse(coarse);
        g.node[i] = *s.at(&t.direct, chunk_of::<A>(coarse));
    }
}

/// Pipeline stage `level` (`1..DEPTH`): one inner step for every lane, then a prefetch of the
/// line the next stage reads (an inner node, or after the last inner level the leaf).
#[inline(always)]
fn advance<A: Family, S: Search, const DEPTH: usize>(
    t: &PlanB<A>,
    s: S,
    level: usize,
    g: &mut Group<A::Key>,
) {
    for i in 0..LANES {
        g.node[i] = step(t, s, g.node[i], g.x[i]);
        if level + 1 == DEPTH {
            s.prefetch(s.at(&t.leaves, g.node[i] as usize));
        } else {
            s.prefetch(s.at(&t.inner, g.node[i] as usize));
        }
    }
}

/// Pipeline stage `DEPTH`: the leaf searches.
#[inline(always)]
fn finish_group<A: Family, S: Search>(
    t: &PlanB<A>,
    s: S,
    g: &Group<A::Key>,
    addrs: &[A],
    out: &mut [Option<NextHop>],
) {
    for ((o, addr), (&node, &x)) in out.iter_mut().zip(addrs).zip(g.node.iter().zip(&g.x)) {
        *o = finish(t, s, node, x, *addr);
    }
}

/// A batch of any length for trees of `DEPTH` steps (a constant, so the level loops unroll):
/// full groups of `LANES` through the pipeline, then single lookups for the rest. In round
/// `r`, group `r` enters, group `r - level` takes inner step `level`, and group `r - DEPTH`
/// searches its leaves.
#[inline(always)]
fn batch_of_depth<A: Family, S: Search, const DEPTH: usize>(
    t: &PlanB<A>,
    s: S,
    addrs: &[A],
    out: &mut [Option<NextHop>],
) {
    const { assert!(DEPTH < IN_FLIGHT, "one pipeline slot per stage") };
    let groups = addrs.len() / LANES;
    let lanes = |g: usize| g * LANES..(g + 1) * LANES;
    let mut states: [Group<A::Key>; IN_FLIGHT] = std::array::from_fn(|_| Group::new());
    for round in 0..groups + DEPTH {
        if round < groups {
            enter(t, s, &addrs[lanes(round)], &mut states[round % IN_FLIGHT]);
        }
        for level in 1..DEPTH {
            if let Some(g) = round.checked_sub(level).filter(|&g| g < groups) {
                advance::<A, S, DEPTH>(t, s, level, &mut states[g % IN_FLIGHT]);
            }
        }
        if let Some(g) = round.checked_sub(DEPTH) {
            let state = &states[g % IN_FLIGHT];
            finish_group(t, s, state, &addrs[lanes(g)], &mut out[lanes(g)]);
        }
    }
    let rest = groups * LANES;
    for (a, o) in addrs[rest..].iter().zip(&mut out[rest..]) {
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
