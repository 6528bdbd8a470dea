//! The lookup walk, written once for every family and node-search backend.
//!
//! A walk is: direct table → descriptor of the chunk's tree → `depth` node searches (inner
//! levels multiply the node index by the fan-out and add the rank; the leaf level gives the
//! position of the interval) → result id → answer. The batched walk runs `LANES` independent
//! lookups level by level, so the cache misses of different lanes overlap instead of queueing
//! behind each other (PlanB §3.4), and every lane does the same steps (no per-lane branches
//! except the rare fallback cell).

use super::layout::{chunk_of, fanout, Family, Key};
use super::search::Search;
use super::PlanB;
use crate::table::NextHop;

/// Lanes interleaved by the batched walk (chosen by measurement, see BENCHMARKS.md).
pub const LANES: usize = 32;

/// One lookup.
#[inline(always)]
pub fn one<A: Family, S: Search>(t: &PlanB<A>, s: S, addr: A) -> Option<NextHop> {
    let coarse = addr.coarse();
    let x = A::Key::from_coarse(coarse);
    let desc = usize::from(t.direct[chunk_of::<A>(coarse)]) * t.stride;
    let levels = &t.descs[desc..desc + t.stride];
    let mut node = 0u32;
    for &offset in &levels[..t.depth - 1] {
        let rank = A::Key::rank(s, &t.nodes[(offset + node) as usize], x);
        node = node * fanout::<A::Key>() + rank;
    }
    let leaf = levels[t.depth - 1];
    let pos = node * A::Key::PER_NODE + A::Key::rank(s, &t.nodes[(leaf + node) as usize], x);
    t.resolve(t.values[(levels[t.depth] + pos) as usize], addr)
}

/// `LANES` interleaved lookups.
#[inline(always)]
fn lanes<A: Family, S: Search>(
    t: &PlanB<A>,
    s: S,
    addrs: &[A; LANES],
    out: &mut [Option<NextHop>; LANES],
) {
    let mut x = [A::Key::default(); LANES];
    let mut desc = [0usize; LANES];
    let mut node = [0u32; LANES];
    for i in 0..LANES {
        let coarse = addrs[i].coarse();
        x[i] = A::Key::from_coarse(coarse);
        desc[i] = usize::from(t.direct[chunk_of::<A>(coarse)]) * t.stride;
    }
    for level in 0..t.depth - 1 {
        for i in 0..LANES {
            let offset = t.descs[desc[i] + level];
            let rank = A::Key::rank(s, &t.nodes[(offset + node[i]) as usize], x[i]);
            node[i] = node[i] * fanout::<A::Key>() + rank;
        }
    }
    let leaf = t.depth - 1;
    for i in 0..LANES {
        let offset = t.descs[desc[i] + leaf];
        let pos = node[i] * A::Key::PER_NODE
            + A::Key::rank(s, &t.nodes[(offset + node[i]) as usize], x[i]);
        out[i] = t.resolve(
            t.values[(t.descs[desc[i] + t.depth] + pos) as usize],
            addrs[i],
        );
    }
}

/// A batch of any length: full groups of `LANES`, then single lookups for the rest.
#[inline(always)]
pub fn batch<A: Family, S: Search>(t: &PlanB<A>, s: S, addrs: &[A], out: &mut [Option<NextHop>]) {
    let mut groups = addrs.chunks_exact(LANES);
    let mut outs = out.chunks_exact_mut(LANES);
    for (a, o) in (&mut groups).zip(&mut outs) {
        let a: &[A; LANES] = a.try_into().expect("chunks_exact yields LANES");
        let o: &mut [Option<NextHop>; LANES] = o.try_into().expect("chunks_exact yields LANES");
        lanes(t, s, a, o);
    }
    for (a, o) in groups.remainder().iter().zip(outs.into_remainder()) {
        *o = one(t, s, *a);
    }
}

/// The walks compiled with each SIMD instruction set enabled, so the node search inlines.
#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use super::super::search::{avx2::Avx2, avx512::Avx512};
    use super::*;

    /// Batched walk with AVX-512 enabled.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub fn batch_avx512<A: Family>(
        t: &PlanB<A>,
        s: Avx512,
        addrs: &[A],
        out: &mut [Option<NextHop>],
    ) {
        batch(t, s, addrs, out)
    }

    /// Single walk with AVX-512 enabled.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub fn one_avx512<A: Family>(t: &PlanB<A>, s: Avx512, addr: A) -> Option<NextHop> {
        one(t, s, addr)
    }

    /// Batched walk with AVX2 enabled.
    #[target_feature(enable = "avx2")]
    pub fn batch_avx2<A: Family>(t: &PlanB<A>, s: Avx2, addrs: &[A], out: &mut [Option<NextHop>]) {
        batch(t, s, addrs, out)
    }

    /// Single walk with AVX2 enabled.
    #[target_feature(enable = "avx2")]
    pub fn one_avx2<A: Family>(t: &PlanB<A>, s: Avx2, addr: A) -> Option<NextHop> {
        one(t, s, addr)
    }
}
