//! The AVX2 staging step with gathers: eight addresses per step, their direct entries (and
//! sub-table entries) gathered, the answers written with one store, the walk lanes
//! left-packed into their classes with a permutation.
//!
//! AVX2 has no compress, so each class's lanes are packed with `vpermd` and a permutation
//! looked up by the class's lane mask ([`LEFT_PACK`], 1 KiB).

use std::arch::x86_64::*;

use super::kernel::{Packed, STAGE_AHEAD};
use super::{
    Staged, ANSWERED, ANSWERED_HOP, ANSWERED_MISS, ENTER_LEAF, ENTER_NEAR, ENTRY_NODE, SPLIT,
    SUB_BASE, SUB_SHIFT_AT,
};
use crate::addr::AddressInput;
use crate::engine::planb::layout::Family;
use crate::engine::planb::search::avx2::Avx2;
use crate::engine::planb::search::Search;
use crate::route_table::NextHop;

/// For each mask of eight lanes, the lanes set in it, in order, as eight 4-bit indices (the
/// first in the lowest nibble): the permutation that packs those lanes to the front.
static LEFT_PACK: [u32; 256] = left_pack();

const fn left_pack() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut packed, mut n, mut lane) = (0u32, 0, 0);
        while lane < 8 {
            if mask & (1 << lane) != 0 {
                packed |= (lane as u32) << (4 * n);
                n += 1;
            }
            lane += 1;
        }
        table[mask] = packed;
        mask += 1;
    }
    table
}

/// The AVX2 staging step ([`super::kernel::Kernel::stage`]) with gathers.
///
/// # Safety
/// As for [`super::kernel::Kernel::stage`], and the CPU has AVX2 (the token).
#[inline(always)]
pub unsafe fn stage<I: AddressInput<u128>, const SWAP: bool>(
    s: Avx2,
    staged: &Staged,
    addrs: &[I],
    block: std::ops::Range<usize>,
    out: &mut [NextHop],
    miss: NextHop,
    classes: &mut [Packed; 4],
) {
    const STEP: usize = 8;
    let start = block.start;
    let steps = block.len() / STEP;
    debug_assert!(block.end <= addrs.len().min(out.len()));
    debug_assert!(block.len().is_multiple_of(STEP));
    // SAFETY: every address read and every answer stored is in the block, inside `addrs` and
    // `out`; a class's 8-lane store starts at its `len`, below `LANES + 8 j` before step `j`,
    // and so ends inside `PACKED` (which leaves 16 slots past a block). Gather indices are
    // chunk numbers (the top 16 bits), below 2^16 = `entries.len()`, and for split lanes a
    // sub-table's first index plus the key shifted down to the sub-table's width, inside
    // `sub` (as `Staged::of` and `Staged::with_splits` make them). Positions fit 32 bits
    // (caller). The CPU has AVX2 (caller).
    unsafe {
        let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let nibbles = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
        let answered = _mm256_set1_epi32(ANSWERED as i32);
        let no_route = _mm256_set1_epi32(ANSWERED_MISS as i32);
        let hop = _mm256_set1_epi32(ANSWERED_HOP as i32);
        let missing = _mm256_set1_epi32(miss as i32);
        let kind = _mm256_set1_epi32((ANSWERED | SPLIT) as i32);
        let split = _mm256_set1_epi32(SPLIT as i32);
        let sub_base = _mm256_set1_epi32(SUB_BASE as i32);
        let shift_bits = _mm256_set1_epi32(31);
        let enter_leaf = _mm256_set1_epi32(ENTER_LEAF as i32);
        let enter_near = _mm256_set1_epi32(ENTER_NEAR as i32);
        let entry_node = _mm256_set1_epi32(ENTRY_NODE as i32);
        let zero = _mm256_setzero_si256();
        let (entries, sub) = (&staged.entries, &staged.sub);
        let mask_of = |v: __m256i| _mm256_movemask_ps(_mm256_castsi256_ps(v)) as u32;
        let mut len = classes.each_ref().map(|p| p.len);
        // Pass 1: every lane's entry, with no branch on a gathered value, so that the
        // gathers of successive steps overlap; the sub-table lines a step needs are asked
        // for `SUB_AHEAD` steps before its second gather.
        const SUB_AHEAD: usize = 8;
        let mut entry_of = [0u32; super::BLOCK];
        let mut key_of = [0u32; super::BLOCK];
        let mut index_of = [0u32; super::BLOCK];
        for j in 0..steps + SUB_AHEAD {
            if j < steps {
                let base = start + STEP * j;
                if j % 2 == 0 {
                    let ahead = base + STAGE_AHEAD * 2 * STEP;
                    if let Some(ahead) = addrs.get(ahead..ahead + 2 * STEP) {
                        s.prefetch_input::<_, false>(ahead);
                    }
                }
                let (mut keys, mut chunks) = ([0u32; STEP], [0u32; STEP]);
                for i in 0..STEP {
                    let coarse = s.at(addrs, base + i).address().coarse();
                    keys[i] = coarse as u32;
                    chunks[i] = (coarse >> 32) as u32;
                }
                let key = _mm256_loadu_si256(keys.as_ptr().cast());
                let chunk = _mm256_loadu_si256(chunks.as_ptr().cast());
                let entry = _mm256_i32gather_epi32::<4>(entries.as_ptr().cast(), chunk);
                let splits = _mm256_cmpeq_epi32(_mm256_and_si256(entry, kind), split);
                let shift = _mm256_and_si256(
                    _mm256_srli_epi32::<{ SUB_SHIFT_AT as i32 }>(entry),
                    shift_bits,
                );
                let index = _mm256_and_si256(
                    _mm256_add_epi32(
                        _mm256_and_si256(entry, sub_base),
                        _mm256_srlv_epi32(key, shift),
                    ),
                    splits,
                );
                _mm256_storeu_si256(entry_of.as_mut_ptr().add(STEP * j).cast(), entry);
                _mm256_storeu_si256(key_of.as_mut_ptr().add(STEP * j).cast(), key);
                _mm256_storeu_si256(index_of.as_mut_ptr().add(STEP * j).cast(), index);
                for &i in &index_of[STEP * j..STEP * j + STEP] {
                    _mm_prefetch::<_MM_HINT_T0>(sub.as_ptr().add(i as usize).cast());
                }
            }
            if j >= SUB_AHEAD {
                let at = STEP * (j - SUB_AHEAD);
                let entry = _mm256_loadu_si256(entry_of.as_ptr().add(at).cast());
                let index = _mm256_loadu_si256(index_of.as_ptr().add(at).cast());
                let splits = _mm256_cmpeq_epi32(_mm256_and_si256(entry, kind), split);
                let entry =
                    _mm256_mask_i32gather_epi32::<4>(entry, sub.as_ptr().cast(), index, splits);
                _mm256_storeu_si256(entry_of.as_mut_ptr().add(at).cast(), entry);
            }
        }
        // Pass 2: the answers, and the walk lanes packed by class.
        for j in 0..steps {
            let base = start + STEP * j;
            let entry = _mm256_loadu_si256(entry_of.as_ptr().add(STEP * j).cast());
            let key = _mm256_loadu_si256(key_of.as_ptr().add(STEP * j).cast());
            let none = _mm256_cmpeq_epi32(_mm256_and_si256(entry, no_route), no_route);
            let answer = _mm256_blendv_epi8(_mm256_and_si256(entry, hop), missing, none);
            _mm256_storeu_si256(out.as_mut_ptr().add(base).cast(), answer);
            let walk = mask_of(_mm256_cmpeq_epi32(_mm256_and_si256(entry, answered), zero));
            if walk == 0 {
                continue;
            }
            let leaf = walk
                & mask_of(_mm256_cmpeq_epi32(
                    _mm256_and_si256(entry, enter_leaf),
                    enter_leaf,
                ));
            let near = walk
                & mask_of(_mm256_cmpeq_epi32(
                    _mm256_and_si256(entry, enter_near),
                    enter_near,
                ));
            let node = _mm256_and_si256(entry, entry_node);
            let at = _mm256_add_epi32(lane, _mm256_set1_epi32(base as i32));
            // `ENTER_MID` is both marks; classes in `Classes` order: root, mid, near, leaf.
            let masks = [
                walk & !(leaf | near),
                leaf & near,
                near & !leaf,
                leaf & !near,
            ];
            let classes_used = if (leaf | near) == 0 { 1 } else { 4 };
            for ((p, len), mask) in classes
                .iter_mut()
                .zip(&mut len)
                .zip(masks)
                .take(classes_used)
            {
                let order = _mm256_and_si256(
                    _mm256_srlv_epi32(_mm256_set1_epi32(LEFT_PACK[mask as usize] as i32), nibbles),
                    _mm256_set1_epi32(7),
                );
                for (slots, values) in [
                    (p.x.as_mut_ptr(), key),
                    (p.node.as_mut_ptr(), node),
                    (p.at.as_mut_ptr(), at),
                ] {
                    _mm256_storeu_si256(
                        slots.add(*len).cast(),
                        _mm256_permutevar8x32_epi32(values, order),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn left_pack_lists_the_lanes_of_each_mask() {
        for mask in 0..256u32 {
            let lanes: Vec<u32> = (0..8).filter(|l| mask & (1 << l) != 0).collect();
            let packed: Vec<u32> = (0..lanes.len())
                .map(|n| (LEFT_PACK[mask as usize] >> (4 * n)) & 15)
                .collect();
            assert_eq!(packed, lanes, "mask {mask:#010b}");
        }
    }
}
