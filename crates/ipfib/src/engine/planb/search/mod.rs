//! Node search: count the keys of one cache-line node that are less than the query.
//!
//! The tree walk is written once ([`super::walk`]) against [`Search`]; the backends below
//! implement it for both key widths. Each SIMD backend is a zero-sized *token* that can only be
//! obtained after run-time CPU detection, so holding one proves the instructions exist and its
//! methods can be safe. The walk is compiled once per backend inside a
//! `#[target_feature]` function, and [`crate::engine::Backend`] picks one when a table is built: the
//! per-lookup cost of dispatch is one predictable branch per batch.

/// The `Search` methods every SIMD backend takes from `shared` (unchecked indexing and the
/// prefetches), written once for their `impl Search` blocks.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
macro_rules! shared_access {
    () => {
        #[inline(always)]
        unsafe fn at<T>(self, slice: &[T], i: usize) -> &T {
            // SAFETY: the caller guarantees `i < slice.len()`.
            unsafe { super::shared::at(slice, i) }
        }

        #[inline(always)]
        unsafe fn at_mut<T>(self, slice: &mut [T], i: usize) -> &mut T {
            // SAFETY: the caller guarantees `i < slice.len()`.
            unsafe { super::shared::at_mut(slice, i) }
        }

        #[inline(always)]
        fn prefetch<T>(self, r: &T) {
            super::shared::prefetch(r)
        }

        #[inline(always)]
        fn prefetch_input<T, const NTA: bool>(self, input: &[T]) {
            super::shared::prefetch_input::<T, NTA>(input)
        }
    };
}

#[cfg(target_arch = "x86_64")]
pub mod avx2;
#[cfg(target_arch = "x86_64")]
pub mod avx512;
#[cfg(target_arch = "aarch64")]
pub mod neon;
pub mod scalar;

use super::line::{Line16, Line32};

/// Counts keys `< x` among the first `KEYS` slots of one line, for both key widths. Keys are
/// stored as `boundary - 1` and padded with the key type's maximum, so the count is the number
/// of boundaries `<= x`; padding never counts, and the slots past `KEYS` (a link, a leaf's
/// answers) are never compared. [`super::layout::Key`] picks the method and `KEYS` for each
/// node kind.
pub trait Search: Copy {
    /// Number of the `u16` slots `0..KEYS` (`KEYS <= 32`) of `line` that are less than `x`.
    fn rank16<const KEYS: usize>(self, line: &Line16, x: u16) -> u32;
    /// Number of the `u32` slots `0..KEYS` (`KEYS <= 16`) of `line` that are less than `x`.
    fn rank32<const KEYS: usize>(self, line: &Line32, x: u32) -> u32;

    /// `&slice[i]` for an index the walk computed from the table's own arrays. The scalar
    /// backend checks it (and stays safe code); the SIMD backends skip the check (asserted in
    /// debug builds), which saves four instructions per tree level.
    ///
    /// # Safety
    /// `i < slice.len()`. The walk forms only such indices from a structure that satisfies
    /// PlanB's invariants (see [`super::validate`]).
    unsafe fn at<T>(self, slice: &[T], i: usize) -> &T;

    /// `&mut slice[i]` for an index the walk computed (a batch position or a pipeline slot),
    /// checked like [`Search::at`].
    ///
    /// # Safety
    /// `i < slice.len()`.
    unsafe fn at_mut<T>(self, slice: &mut [T], i: usize) -> &mut T;

    /// Asks for the cache line of `r` ahead of its use (a hint; the portable backend does
    /// nothing).
    fn prefetch<T>(self, r: &T);

    /// Asks for every cache line of `input`, addresses the batch reads once a few groups from
    /// now (a hint; the portable backend does nothing): non-temporal with `NTA`, so that
    /// lines read once do not displace the structure's from L2, else as ordinary lines. Which
    /// pays depends on the walk (see [`super::layout::Family::INPUT_NTA`]).
    fn prefetch_input<T, const NTA: bool>(self, input: &[T]);
}

/// The index check and prefetch the SIMD backends share (the portable backend keeps the check
/// and does not prefetch, so it stays safe code).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod shared {
    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_NTA, _MM_HINT_T0};

    /// `&slice[i]`, checked in debug builds (and the test profile) only.
    ///
    /// # Safety
    /// `i < slice.len()`. The walk only forms such indices, by the builder's invariants:
    /// chunk < 2^16 = direct.len(); every direct entry and every link names a node of the
    /// array the next step reads, and a rank never exceeds the node's real keys, so
    /// `link + rank` is one of its children.
    #[inline(always)]
    pub unsafe fn at<T>(slice: &[T], i: usize) -> &T {
        debug_assert!(
            i < slice.len(),
            "walk index {i} out of bounds {}",
            slice.len()
        );
        // SAFETY: the caller guarantees `i < slice.len()`.
        unsafe { slice.get_unchecked(i) }
    }

    /// `&mut slice[i]`, checked in debug builds (and the test profile) only.
    ///
    /// # Safety
    /// `i < slice.len()`.
    #[inline(always)]
    pub unsafe fn at_mut<T>(slice: &mut [T], i: usize) -> &mut T {
        debug_assert!(
            i < slice.len(),
            "walk index {i} out of bounds {}",
            slice.len()
        );
        // SAFETY: the caller guarantees `i < slice.len()`.
        unsafe { slice.get_unchecked_mut(i) }
    }

    /// Asks for the cache line of `r`.
    #[inline(always)]
    pub fn prefetch<T>(r: &T) {
        line::<false>((r as *const T).cast());
    }

    /// Asks for the cache line of `p`: non-temporal with `NTA`, else into every level.
    #[inline(always)]
    fn line<const NTA: bool>(p: *const i8) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE is part of x86-64; a prefetch is a hint that never faults, whatever the
        // address.
        unsafe {
            if NTA {
                _mm_prefetch::<_MM_HINT_NTA>(p)
            } else {
                _mm_prefetch::<_MM_HINT_T0>(p)
            }
        }
        #[cfg(target_arch = "aarch64")]
        // SAFETY: `prfm` is part of AArch64; a prefetch is a hint that never faults, whatever
        // the address, and it touches no register, flag or stack.
        unsafe {
            if NTA {
                std::arch::asm!("prfm pldl1strm, [{0}]", in(reg) p, options(nostack, preserves_flags, readonly));
            } else {
                std::arch::asm!("prfm pldl1keep, [{0}]", in(reg) p, options(nostack, preserves_flags, readonly));
            }
        }
    }

    /// Asks for every 64-byte line `input` occupies: non-temporal with `NTA`, else into every
    /// level.
    #[inline(always)]
    pub fn prefetch_input<T, const NTA: bool>(input: &[T]) {
        let bytes = std::mem::size_of_val(input);
        if bytes == 0 {
            return;
        }
        let start = input.as_ptr().cast::<i8>();
        // From the line holding the first byte to the one holding the last.
        let skew = start as usize % 64;
        let mut offset = 0;
        while offset < skew + bytes {
            // The address is only formed (wrapping), never dereferenced.
            line::<NTA>(start.wrapping_sub(skew).wrapping_add(offset));
            offset += 64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every available backend agrees with a plain count on random lines and queries, for
    /// every key count the layout uses.
    fn check_u32(line: [u32; 16], x: u32) {
        let line = Line32(line);
        let want = |keys: usize| line.0[..keys].iter().filter(|&&k| k < x).count() as u32;
        let expect = [want(7), want(9), want(15), want(16)];
        fn ranks<S: Search>(s: S, l: &Line32, x: u32) -> [u32; 4] {
            [
                s.rank32::<7>(l, x),
                s.rank32::<9>(l, x),
                s.rank32::<15>(l, x),
                s.rank32::<16>(l, x),
            ]
        }
        assert_eq!(ranks(scalar::Scalar, &line, x), expect, "scalar u32");
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(t) = avx2::Avx2::new() {
                assert_eq!(ranks(t, &line, x), expect, "avx2 u32");
            }
            if let Some(t) = avx512::Avx512::new() {
                assert_eq!(ranks(t, &line, x), expect, "avx512 u32");
            }
        }
        #[cfg(target_arch = "aarch64")]
        if let Some(t) = neon::Neon::new() {
            assert_eq!(ranks(t, &line, x), expect, "neon u32");
        }
    }

    fn check_u16(line: [u16; 32], x: u16) {
        let line = Line16(line);
        let want = |keys: usize| line.0[..keys].iter().filter(|&&k| k < x).count() as u32;
        let expect = [want(9), want(14), want(30), want(32)];
        fn ranks<S: Search>(s: S, l: &Line16, x: u16) -> [u32; 4] {
            [
                s.rank16::<9>(l, x),
                s.rank16::<14>(l, x),
                s.rank16::<30>(l, x),
                s.rank16::<32>(l, x),
            ]
        }
        assert_eq!(ranks(scalar::Scalar, &line, x), expect, "scalar u16");
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(t) = avx2::Avx2::new() {
                assert_eq!(ranks(t, &line, x), expect, "avx2 u16");
            }
            if let Some(t) = avx512::Avx512::new() {
                assert_eq!(ranks(t, &line, x), expect, "avx512 u16");
            }
        }
        #[cfg(target_arch = "aarch64")]
        if let Some(t) = neon::Neon::new() {
            assert_eq!(ranks(t, &line, x), expect, "neon u16");
        }
    }

    #[test]
    fn extremes_and_sign_bit() {
        let mut k = [0u32; 16];
        for (i, v) in k.iter_mut().enumerate() {
            *v = (i as u32).wrapping_mul(0x1111_1111) ^ 0x8000_0000;
        }
        for x in [
            0,
            1,
            0x7fff_ffff,
            0x8000_0000,
            0x8000_0001,
            u32::MAX - 1,
            u32::MAX,
        ] {
            check_u32(k, x);
            check_u32([u32::MAX; 16], x);
            check_u32([0; 16], x);
        }
        let mut k = [0u16; 32];
        for (i, v) in k.iter_mut().enumerate() {
            *v = (i as u16).wrapping_mul(0x0841) ^ 0x8000;
        }
        for x in [0, 1, 0x7fff, 0x8000, 0x8001, u16::MAX - 1, u16::MAX] {
            check_u16(k, x);
            check_u16([u16::MAX; 32], x);
            check_u16([0; 32], x);
        }
    }

    proptest! {
        #[test]
        fn backends_agree_u32(line in proptest::array::uniform16(any::<u32>()), x in any::<u32>()) {
            check_u32(line, x);
        }

        #[test]
        fn backends_agree_u16(line in proptest::array::uniform32(any::<u16>()), x in any::<u16>()) {
            check_u16(line, x);
        }
    }
}
