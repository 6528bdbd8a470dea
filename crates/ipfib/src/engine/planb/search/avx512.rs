//! AVX-512 node search: one 512-bit load, one unsigned compare into a mask limited to the key
//! slots, one popcount.

use std::arch::x86_64::{
    __m512i, _mm512_load_si512, _mm512_mask_cmplt_epu16_mask, _mm512_mask_cmplt_epu32_mask,
    _mm512_set1_epi16, _mm512_set1_epi32,
};

use super::Search;
use crate::engine::planb::line::{Line16, Line32};

pub use crate::cpu::Avx512;

/// The mask of the first `keys` lanes.
#[inline(always)]
const fn first(keys: usize) -> u64 {
    if keys >= 64 {
        u64::MAX
    } else {
        (1u64 << keys) - 1
    }
}

impl Search for Avx512 {
    #[inline(always)]
    fn rank32<const KEYS: usize>(self, line: &Line32, x: u32) -> u32 {
        // SAFETY: an `Avx512` exists only when the CPU has AVX-512F (checked in `new`); `line`
        // is a 64-byte-aligned reference to 64 bytes, as `_mm512_load_si512` requires.
        unsafe {
            let words = _mm512_load_si512((line as *const Line32).cast::<__m512i>());
            let lanes = first(KEYS) as u16;
            _mm512_mask_cmplt_epu32_mask(lanes, words, _mm512_set1_epi32(x as i32)).count_ones()
        }
    }

    shared_access!();

    #[inline(always)]
    fn rank16<const KEYS: usize>(self, line: &Line16, x: u16) -> u32 {
        // SAFETY: an `Avx512` exists only when the CPU has AVX-512F and AVX-512BW (checked in
        // `new`); `line` is a 64-byte-aligned reference to 64 bytes.
        unsafe {
            let halves = _mm512_load_si512((line as *const Line16).cast::<__m512i>());
            let lanes = first(KEYS) as u32;
            _mm512_mask_cmplt_epu16_mask(lanes, halves, _mm512_set1_epi16(x as i16)).count_ones()
        }
    }
}
