//! The AVX-512 batched walk: sixteen lookups per vector, searched with gathers.
//!
//! The per-lane walk ([`super::walk`]) spends about fifteen scalar instructions per lane and
//! level on bookkeeping (descriptor offset, node address, rank, child index) around one SIMD
//! compare. Here the bookkeeping is vectorised across lanes instead: each `__m512i` holds the
//! state of sixteen lookups, the node search is a branch-free binary search whose every probe
//! is one gather (a node has `SLOTS - 1` sorted keys and a pad slot, so `log2(SLOTS)` probes
//! give the rank exactly), and the child index is a shift and an add. Four vectors (64 lookups)
//! are interleaved so the gathers' latencies overlap.

use std::arch::x86_64::{
    __m512i, _mm512_add_epi32, _mm512_cmplt_epu32_mask, _mm512_i32gather_epi32, _mm512_loadu_si512,
    _mm512_mask_add_epi32, _mm512_set1_epi32, _mm512_setzero_si512, _mm512_slli_epi32,
    _mm512_storeu_si512,
};

use super::layout::{chunk_of, fanout, Family, Key};
use super::search::avx512::Avx512;
use super::PlanB;
use crate::table::NextHop;

/// Vectors of sixteen lookups interleaved.
const GROUPS: usize = 4;
/// Lookups per interleaved block.
pub const LANES: usize = 16 * GROUPS;

/// Node arrays at most this long keep every gather index below 2^31 (gathers take signed
/// 32-bit indices); larger tables use the per-lane walk.
pub const MAX_NODES: usize = 1 << 25;

/// A batch of any length with the gather walk; the remainder uses the per-lane walk.
#[target_feature(enable = "avx512f,avx512bw,popcnt")]
pub fn batch<A: Family>(t: &PlanB<A>, s: Avx512, addrs: &[A], out: &mut [Option<NextHop>]) {
    if t.nodes.len() > MAX_NODES {
        return super::walk::batch(t, s, addrs, out);
    }
    super::walk::with_const_depth!(
        t.depth,
        blocks::<A>(t, s, addrs, out),
        super::walk::batch(t, s, addrs, out)
    )
}

#[inline(always)]
fn blocks<A: Family, const DEPTH: usize>(
    t: &PlanB<A>,
    s: Avx512,
    addrs: &[A],
    out: &mut [Option<NextHop>],
) {
    let mut groups = addrs.chunks_exact(LANES);
    let mut outs = out.chunks_exact_mut(LANES);
    for (a, o) in (&mut groups).zip(&mut outs) {
        let a: &[A; LANES] = a.try_into().expect("chunks_exact yields LANES");
        let o: &mut [Option<NextHop>; LANES] = o.try_into().expect("chunks_exact yields LANES");
        block::<A, DEPTH>(t, s, a, o);
    }
    super::walk::batch(t, s, groups.remainder(), outs.into_remainder());
}

#[inline(always)]
fn block<A: Family, const DEPTH: usize>(
    t: &PlanB<A>,
    _s: Avx512,
    addrs: &[A; LANES],
    out: &mut [Option<NextHop>; LANES],
) {
    // Scalar preparation: the key bits and the descriptor row of each lane.
    let mut xs = [0u32; LANES];
    let mut rows = [0u32; LANES];
    for i in 0..LANES {
        let coarse = addrs[i].coarse();
        xs[i] = A::Key::from_coarse(coarse).into_u32();
        rows[i] = u32::from(t.direct[chunk_of::<A>(coarse)]) * (DEPTH as u32 + 1);
    }
    let log2 = fanout::<A::Key>().trailing_zeros();
    let descs = t.descs.as_ptr().cast::<i32>();
    let nodes = t.nodes.as_ptr();
    let mut ids = [0u32; LANES];
    // SAFETY: AVX-512F is enabled by the caller's target feature (proven by the `Avx512`
    // token). Every gather index stays in bounds by the builder's invariants: `rows` index
    // existing descriptor rows (each `DEPTH + 1` words); an inner rank never exceeds the real
    // separators of a node and the binary search probes only slots `0..SLOTS - 1` of the node
    // at `offset + node`, which exists in its level; the final slot indexes the chunk's values.
    // `nodes.len() <= MAX_NODES` keeps every index below 2^31.
    unsafe {
        let mut x = [_mm512_setzero_si512(); GROUPS];
        let mut row = [_mm512_setzero_si512(); GROUPS];
        let mut node = [_mm512_setzero_si512(); GROUPS];
        for g in 0..GROUPS {
            x[g] = _mm512_loadu_si512(xs.as_ptr().add(16 * g).cast());
            row[g] = _mm512_loadu_si512(rows.as_ptr().add(16 * g).cast());
        }
        for level in 0..DEPTH {
            let mut base = [_mm512_setzero_si512(); GROUPS];
            for g in 0..GROUPS {
                let at = _mm512_add_epi32(row[g], _mm512_set1_epi32(level as i32));
                let offset = _mm512_i32gather_epi32::<4>(at, descs);
                base[g] = shl(_mm512_add_epi32(offset, node[g]), log2);
            }
            let mut rank = [_mm512_setzero_si512(); GROUPS];
            for step in (0..log2).rev() {
                let half = 1i32 << step;
                for g in 0..GROUPS {
                    let probe = _mm512_add_epi32(
                        _mm512_add_epi32(base[g], rank[g]),
                        _mm512_set1_epi32(half - 1),
                    );
                    let key = A::Key::gather(nodes, probe);
                    let less = _mm512_cmplt_epu32_mask(key, x[g]);
                    rank[g] =
                        _mm512_mask_add_epi32(rank[g], less, rank[g], _mm512_set1_epi32(half));
                }
            }
            for g in 0..GROUPS {
                node[g] = _mm512_add_epi32(shl(node[g], log2), rank[g]);
            }
        }
        for g in 0..GROUPS {
            let at = _mm512_add_epi32(row[g], _mm512_set1_epi32(DEPTH as i32));
            let value_base = _mm512_i32gather_epi32::<4>(at, descs);
            let id = _mm512_i32gather_epi32::<4>(
                _mm512_add_epi32(value_base, node[g]),
                t.values.as_ptr().cast(),
            );
            _mm512_storeu_si512(ids.as_mut_ptr().add(16 * g).cast(), id);
        }
    }
    for i in 0..LANES {
        out[i] = t.resolve(ids[i], addrs[i]);
    }
}

/// Shift every lane left by `bits` (4 or 5), a constant after inlining.
#[inline(always)]
unsafe fn shl(v: __m512i, bits: u32) -> __m512i {
    // SAFETY: the caller has AVX-512F.
    unsafe {
        match bits {
            4 => _mm512_slli_epi32::<4>(v),
            5 => _mm512_slli_epi32::<5>(v),
            _ => unreachable!("fan-out is 16 or 32"),
        }
    }
}
