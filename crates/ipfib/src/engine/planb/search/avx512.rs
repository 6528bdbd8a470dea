//! AVX-512 node search: one 512-bit load, one unsigned compare into a mask, one popcount.

use std::arch::x86_64::{
    __m512i, _mm512_cmplt_epu16_mask, _mm512_cmplt_epu32_mask, _mm512_load_si512,
    _mm512_set1_epi16, _mm512_set1_epi32,
};

use super::Search;
use crate::engine::planb::layout::{Node16, Node32};

/// Proof that the CPU has AVX-512F, AVX-512BW and POPCNT; only [`Avx512::new`] makes one.
#[derive(Clone, Copy, Debug)]
pub struct Avx512(());

impl Avx512 {
    /// The token, if the CPU supports AVX-512F and AVX-512BW.
    pub fn new() -> Option<Self> {
        (is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("popcnt"))
        .then_some(Avx512(()))
    }
}

impl Search for Avx512 {
    #[inline(always)]
    fn rank32(self, node: &Node32, x: u32) -> u32 {
        // SAFETY: an `Avx512` exists only when the CPU has AVX-512F (checked in `new`); `node`
        // is a 64-byte-aligned reference, as `_mm512_load_si512` requires.
        unsafe {
            let keys = _mm512_load_si512(node.0.as_ptr().cast::<__m512i>());
            _mm512_cmplt_epu32_mask(keys, _mm512_set1_epi32(x as i32)).count_ones()
        }
    }

    #[inline(always)]
    fn at<T>(self, slice: &[T], i: usize) -> &T {
        debug_assert!(
            i < slice.len(),
            "walk index {i} out of bounds {}",
            slice.len()
        );
        // SAFETY: the walk only forms indices that the builder's invariants keep in bounds:
        // chunk < 2^16 = direct.len(); descriptor rows exist for every direct entry; an inner
        // node's rank never exceeds its real separators, so a child index stays inside the next
        // level; a leaf position is at most the chunk's key count, and the chunk has one more
        // value than keys. Debug builds (and the test profile) check it.
        unsafe { slice.get_unchecked(i) }
    }

    #[inline(always)]
    fn rank16(self, node: &Node16, x: u16) -> u32 {
        // SAFETY: an `Avx512` exists only when the CPU has AVX-512F and AVX-512BW (checked in
        // `new`); `node` is a 64-byte-aligned reference.
        unsafe {
            let keys = _mm512_load_si512(node.0.as_ptr().cast::<__m512i>());
            _mm512_cmplt_epu16_mask(keys, _mm512_set1_epi16(x as i16)).count_ones()
        }
    }
}
