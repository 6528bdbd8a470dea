//! AVX2 node search: two 256-bit compares per node.
//!
//! AVX2 has only signed compares, so keys and query are flipped at the sign bit first, which
//! turns unsigned order into signed order.

use std::arch::x86_64::{
    __m256i, _mm256_castsi256_ps, _mm256_cmpgt_epi16, _mm256_cmpgt_epi32, _mm256_load_si256,
    _mm256_movemask_epi8, _mm256_movemask_ps, _mm256_set1_epi16, _mm256_set1_epi32,
    _mm256_xor_si256,
};

use super::Search;
use crate::engine::planb::line::{Line16, Line32};

pub use crate::cpu::Avx2;

/// The low `bits` bits set.
#[inline(always)]
const fn low(bits: usize) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    }
}

impl Search for Avx2 {
    #[inline(always)]
    fn rank32<const KEYS: usize>(self, line: &Line32, x: u32) -> u32 {
        // SAFETY: an `Avx2` exists only when the CPU has AVX2 (checked in `new`); `line` is a
        // 64-byte aligned reference to 64 bytes, so both 32-byte halves are aligned and in
        // bounds.
        unsafe {
            let bias = _mm256_set1_epi32(i32::MIN);
            let q = _mm256_xor_si256(_mm256_set1_epi32(x as i32), bias);
            let p = (line as *const Line32).cast::<__m256i>();
            let lo = _mm256_xor_si256(_mm256_load_si256(p), bias);
            let lt_lo = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(q, lo))) as u32;
            if KEYS <= 8 {
                return (lt_lo & low(KEYS)).count_ones();
            }
            let hi = _mm256_xor_si256(_mm256_load_si256(p.add(1)), bias);
            let lt_hi = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(q, hi))) as u32;
            lt_lo.count_ones() + (lt_hi & low(KEYS.saturating_sub(8))).count_ones()
        }
    }

    shared_access!();

    #[inline(always)]
    fn rank16<const KEYS: usize>(self, line: &Line16, x: u16) -> u32 {
        // SAFETY: as above. Each 16-bit lane sets two bits of the byte mask, hence the doubled
        // mask widths and the halving.
        unsafe {
            let bias = _mm256_set1_epi16(i16::MIN);
            let q = _mm256_xor_si256(_mm256_set1_epi16(x as i16), bias);
            let p = (line as *const Line16).cast::<__m256i>();
            let lo = _mm256_xor_si256(_mm256_load_si256(p), bias);
            let lt_lo = _mm256_movemask_epi8(_mm256_cmpgt_epi16(q, lo)) as u32;
            if KEYS <= 16 {
                return (lt_lo & low(2 * KEYS)).count_ones() / 2;
            }
            let hi = _mm256_xor_si256(_mm256_load_si256(p.add(1)), bias);
            let lt_hi = _mm256_movemask_epi8(_mm256_cmpgt_epi16(q, hi)) as u32;
            (lt_lo.count_ones() + (lt_hi & low(2 * KEYS.saturating_sub(16))).count_ones()) / 2
        }
    }
}
