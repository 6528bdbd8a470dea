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
    let desc = usize::from(*s.at(&t.direct, chunk_of::<A>(coarse))) * (t.depth + 1);
    // After the last level, `node` is the leaf's value slot: leaves have `fanout` slots.
    let mut node = 0u32;
    for level in 0..t.depth {
        let offset = *s.at(&t.descs, desc + level);
        let rank = A::Key::rank(s, s.at(&t.nodes, (offset + node) as usize), x);
        node = node * fanout::<A::Key>() + rank;
    }
    let base = *s.at(&t.descs, desc + t.depth);
    t.resolve(*s.at(&t.values, (base + node) as usize), addr)
}

/// `LANES` interleaved lookups through trees of `DEPTH` levels. The depth is a constant so the
/// level loop unrolls and each lane's descriptor row is read at fixed offsets.
#[inline(always)]
fn lanes<A: Family, S: Search, const DEPTH: usize>(
    t: &PlanB<A>,
    s: S,
    addrs: &[A; LANES],
    out: &mut [Option<NextHop>; LANES],
) {
    let mut x = [A::Key::default(); LANES];
    let mut row = [0usize; LANES];
    let mut node = [0u32; LANES];
    for i in 0..LANES {
        let coarse = addrs[i].coarse();
        x[i] = A::Key::from_coarse(coarse);
        row[i] = usize::from(*s.at(&t.direct, chunk_of::<A>(coarse))) * (DEPTH + 1);
    }
    for level in 0..DEPTH {
        // Two lanes per iteration: halves the loop overhead, which is a tenth of the step.
        for i in (0..LANES).step_by(2) {
            let offset0 = *s.at(&t.descs, row[i] + level);
            let offset1 = *s.at(&t.descs, row[i + 1] + level);
            let rank0 = A::Key::rank(s, s.at(&t.nodes, (offset0 + node[i]) as usize), x[i]);
            let rank1 = A::Key::rank(
                s,
                s.at(&t.nodes, (offset1 + node[i + 1]) as usize),
                x[i + 1],
            );
            node[i] = node[i] * fanout::<A::Key>() + rank0;
            node[i + 1] = node[i + 1] * fanout::<A::Key>() + rank1;
        }
    }
    let mut id = [0u32; LANES];
    for i in 0..LANES {
        id[i] = *s.at(
            &t.values,
            (*s.at(&t.descs, row[i] + DEPTH) + node[i]) as usize,
        );
    }
    for i in 0..LANES {
        out[i] = t.resolve(id[i], addrs[i]);
    }
}

/// A batch of any length for trees of `DEPTH` levels: full groups of `LANES`, then single
/// lookups for the rest.
#[inline(always)]
fn batch_of_depth<A: Family, S: Search, const DEPTH: usize>(
    t: &PlanB<A>,
    s: S,
    addrs: &[A],
    out: &mut [Option<NextHop>],
) {
    let mut groups = addrs.chunks_exact(LANES);
    let mut outs = out.chunks_exact_mut(LANES);
    for (a, o) in (&mut groups).zip(&mut outs) {
        let a: &[A; LANES] = a.try_into().expect("chunks_exact yields LANES");
        let o: &mut [Option<NextHop>; LANES] = o.try_into().expect("chunks_exact yields LANES");
        lanes::<A, S, DEPTH>(t, s, a, o);
    }
    for (a, o) in groups.remainder().iter().zip(outs.into_remainder()) {
        *o = one(t, s, *a);
    }
}

/// Calls `$f::<.., DEPTH>($args)` with the table's tree depth as a compile-time constant, or
/// evaluates `$deeper` for depths beyond 6. The depth is fixed per table (at most 6 for any
/// table whose node offsets fit 32 bits), so this match runs once per batch; both batched walks
/// (per-lane and gather) use it.
macro_rules! with_const_depth {
    ($depth:expr, $f:ident::<$($g:ty),*>($($arg:expr),*), $deeper:expr) => {
        match $depth {
            1 => $f::<$($g,)* 1>($($arg),*),
            2 => $f::<$($g,)* 2>($($arg),*),
            3 => $f::<$($g,)* 3>($($arg),*),
            4 => $f::<$($g,)* 4>($($arg),*),
            5 => $f::<$($g,)* 5>($($arg),*),
            6 => $f::<$($g,)* 6>($($arg),*),
            _ => $deeper,
        }
    };
}
pub(super) use with_const_depth;

/// A batch of any length.
#[inline(always)]
pub fn batch<A: Family, S: Search>(t: &PlanB<A>, s: S, addrs: &[A], out: &mut [Option<NextHop>]) {
    with_const_depth!(t.depth, batch_of_depth::<A, S>(t, s, addrs, out), {
        for (a, o) in addrs.iter().zip(out.iter_mut()) {
            *o = one(t, s, *a);
        }
    })
}

/// The walks compiled with each SIMD instruction set enabled, so the node search inlines.
#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use super::super::search::{avx2::Avx2, avx512::Avx512};
    use super::*;

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
