//! The AVX-512 staging step: sixteen addresses per step, their entries gathered and the walk
//! lanes compressed into their classes.

use std::arch::x86_64::*;

use super::kernel::{Packed, STAGE_AHEAD};
use super::{
    Staged, ANSWERED, ANSWERED_HOP, ANSWERED_MISS, BLOCK, ENTER_LEAF, ENTER_NEAR, ENTRY_NODE,
    SPLIT, SUB_BASE, SUB_SHIFT_AT,
};
use crate::addr::AddressInput;
use crate::engine::planb::search::avx512::Avx512;
use crate::engine::planb::search::Search;
use crate::route_table::NextHop;

/// Splits `block` (a multiple of 16 addresses, at most [`BLOCK`]): every lane's answer from the staged
/// tables goes to `out` (walk lanes get theirs later), and the walk lanes are appended to
/// their class in `classes` (by the node they enter at), sixteen addresses per step: their
/// top 64 bits gathered, chunk and key bits cut out, the entries gathered (and, for lanes
/// in split chunks, their sub-table entries), and the walk lanes compressed.
///
/// # Safety
/// `block` is as above and inside `addrs` and `out`, `staged` were made by
/// [`Staged::of`] or [`Staged::with_splits`], each class holds fewer than [`LANES`](crate::engine::planb::walk::LANES)
/// lanes, and the CPU has AVX-512F (the token).
#[inline(always)]
pub unsafe fn stage<I: AddressInput<u128>, const SWAP: bool>(
    s: Avx512,
    staged: &Staged,
    addrs: &[I],
    block: std::ops::Range<usize>,
    out: &mut [NextHop],
    miss: NextHop,
    classes: &mut [Packed; 4],
) {
    const STEP: usize = 16;
    let start = block.start;
    let steps = block.len() / STEP;
    debug_assert!(block.end <= addrs.len().min(out.len()));
    debug_assert!(block.len().is_multiple_of(STEP) && block.len() <= BLOCK && steps > 0);
    // SAFETY: every load reads 16 addresses of the block and every store writes 16 lanes
    // of `out` in the block, or 16 slots of a class from its `len`: a class holds fewer
    // than `LANES` lanes before the block (`walk_packed` leaves them) and a step adds at
    // most 16, so before step `j` `len < LANES + 16 j` and the store ends inside
    // `PACKED`. Gather indices are chunk numbers (the top 16 bits), below 2^16 =
    // `entries.len()`, and for split lanes a sub-table's first index plus the key shifted
    // down to the sub-table's width, inside `sub` (as `Staged::of` and
    // `Staged::with_splits` make them). Positions are below the batch length, which fits
    // 32 bits (`staged::batch`). The CPU has AVX-512F (caller).
    unsafe {
        let high_halves = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
        let lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
        let answered = _mm512_set1_epi32(ANSWERED as i32);
        let no_route = _mm512_set1_epi32(ANSWERED_MISS as i32);
        let hop = _mm512_set1_epi32(ANSWERED_HOP as i32);
        let missing = _mm512_set1_epi32(miss as i32);
        let kind = _mm512_set1_epi32((ANSWERED | SPLIT) as i32);
        let split = _mm512_set1_epi32(SPLIT as i32);
        let sub_base = _mm512_set1_epi32(SUB_BASE as i32);
        let shift_bits = _mm512_set1_epi32(31);
        let enter_leaf = _mm512_set1_epi32(ENTER_LEAF as i32);
        let enter_near = _mm512_set1_epi32(ENTER_NEAR as i32);
        let entry_node = _mm512_set1_epi32(ENTRY_NODE as i32);
        let (entries, sub) = (&staged.entries, &staged.sub);
        const {
            assert!(
                std::mem::size_of::<I>() == 16,
                "an IPv6 address or its bytes"
            )
        };
        // Reverses the bytes of each 128-bit lane: network order to the CPU's.
        let reverse = _mm512_broadcast_i32x4(_mm_set_epi8(
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
        ));
        let load = |p: *const __m512i| {
            let a = _mm512_loadu_si512(p);
            if SWAP {
                _mm512_shuffle_epi8(a, reverse)
            } else {
                a
            }
        };
        let input = addrs.as_ptr().add(start).cast::<__m512i>();
        let mut len = classes.each_ref().map(|p| p.len);
        // Step `j`'s key bits and direct entries, and then for lanes in split chunks their
        // sub-table entries. Macros, not closures: a closure this size is not inlined, and
        // out of line it is compiled without AVX-512 (the batch ran at a third of its
        // speed).
        macro_rules! direct_of {
            ($j:expr) => {{
                let j: usize = $j;
                let ahead = start + (j + STAGE_AHEAD) * STEP;
                if let Some(ahead) = addrs.get(ahead..ahead + STEP) {
                    s.prefetch_input::<_, false>(ahead);
                }
                // Four addresses per register, each its low then its high 64 bits.
                let a0 = load(input.add(4 * j));
                let a1 = load(input.add(4 * j + 1));
                let a2 = load(input.add(4 * j + 2));
                let a3 = load(input.add(4 * j + 3));
                let h0 = _mm512_permutex2var_epi64(a0, high_halves, a1);
                let h1 = _mm512_permutex2var_epi64(a2, high_halves, a3);
                // Key bits 16..48 and chunk bits 0..16 of each address.
                let key = _mm512_inserti64x4::<1>(
                    _mm512_castsi256_si512(_mm512_cvtepi64_epi32(_mm512_srli_epi64::<16>(h0))),
                    _mm512_cvtepi64_epi32(_mm512_srli_epi64::<16>(h1)),
                );
                let chunk = _mm512_inserti64x4::<1>(
                    _mm512_castsi256_si512(_mm512_cvtepi64_epi32(_mm512_srli_epi64::<48>(h0))),
                    _mm512_cvtepi64_epi32(_mm512_srli_epi64::<48>(h1)),
                );
                (
                    key,
                    _mm512_i32gather_epi32::<4>(chunk, entries.as_ptr().cast()),
                )
            }};
        }
        macro_rules! sub_of {
            ($key:expr, $entry:expr) => {{
                let (key, entry) = ($key, $entry);
                let splits = _mm512_cmpeq_epi32_mask(_mm512_and_si512(entry, kind), split);
                if splits == 0 {
                    entry
                } else {
                    let shift =
                        _mm512_and_si512(_mm512_srli_epi32::<{ SUB_SHIFT_AT }>(entry), shift_bits);
                    let block = _mm512_add_epi32(
                        _mm512_and_si512(entry, sub_base),
                        _mm512_srlv_epi32(key, shift),
                    );
                    _mm512_mask_i32gather_epi32::<4>(entry, splits, block, sub.as_ptr().cast())
                }
            }};
        }
        // Software-pipelined: step `j + 2`'s direct entries and step `j + 1`'s sub-table
        // entries are asked for before step `j`'s lanes are stored and packed, so each
        // gather has a step's work to hide behind, and the sub-table gather no longer waits
        // on the direct gather just issued.
        let first = direct_of!(0);
        let mut next = (first.0, sub_of!(first.0, first.1));
        let mut after = if steps > 1 { direct_of!(1) } else { first };
        for j in 0..steps {
            let (key, entry) = next;
            if j + 1 < steps {
                let ahead = after;
                if j + 2 < steps {
                    after = direct_of!(j + 2);
                }
                next = (ahead.0, sub_of!(ahead.0, ahead.1));
            }
            let walk = _mm512_testn_epi32_mask(entry, answered);
            let none = _mm512_test_epi32_mask(entry, no_route);
            let answer = _mm512_mask_blend_epi32(none, _mm512_and_si512(entry, hop), missing);
            _mm512_storeu_si512(out.as_mut_ptr().add(start + STEP * j).cast(), answer);
            let at = _mm512_add_epi32(lane, _mm512_set1_epi32((start + STEP * j) as i32));
            // No walk lane among the sixteen: nothing to pack (most steps of a trace the
            // staged tables answer).
            if walk == 0 {
                continue;
            }
            let leaf = _mm512_mask_test_epi32_mask(walk, entry, enter_leaf);
            let near = _mm512_mask_test_epi32_mask(walk, entry, enter_near);
            let node = _mm512_and_si512(entry, entry_node);
            // `ENTER_MID` is both marks.
            let masks = [
                walk & !(leaf | near),
                leaf & near,
                near & !leaf,
                leaf & !near,
            ];
            // Only the first class when no lane enters deeper (a branch as predictable as
            // the trace: a table's sub-tables mostly answer, or mostly name nodes).
            let classes_used = if (leaf | near) == 0 { 1 } else { 4 };
            for ((p, len), mask) in classes
                .iter_mut()
                .zip(&mut len)
                .zip(masks)
                .take(classes_used)
            {
                let slots = [
                    (p.x.as_mut_ptr(), key),
                    (p.node.as_mut_ptr(), node),
                    (p.at.as_mut_ptr(), at),
                ];
                for (base, values) in slots {
                    // Compressed in a register and stored whole: a compress straight to
                    // memory is microcoded on some CPUs.
                    _mm512_storeu_si512(
                        base.add(*len).cast(),
                        _mm512_maskz_compress_epi32(mask, values),
                    );
                }
                *len += mask.count_ones() as usize;
            }
        }
        for (p, len) in classes.iter_mut().zip(len) {
            p.len = len;
        }
    }
}
