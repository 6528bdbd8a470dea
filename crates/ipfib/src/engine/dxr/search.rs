//! Range search inside one 64-byte window: how many of the first `n <= 32` starts are `<= x`,
//! short (`u8`) or long (`u16`), per SIMD backend. The SIMD backends compare both widths and
//! pick the count with a select, so a batch whose lanes mix short and long chunks does not
//! branch on the width.
//!
//! As in PlanB's node search, each SIMD backend is a zero-sized token that only run-time CPU
//! detection makes, so holding one proves the instructions exist; the walk is compiled once
//! per backend inside a `#[target_feature]` function. The scalar token also does the walk's
//! memory accesses with bounds checks, so the scalar walk is safe code in effect; the SIMD
//! tokens skip them, relying on the structure invariants `validate` checks.

/// One backend's window search and memory access.
pub trait Search: Copy {
    /// How many of the first `n` (`1..=32`) starts of `w` are `<=` the query: little-endian
    /// `u16`s against `x16` when `long`, else bytes against `x8`.
    fn count(self, w: &[u8; 64], n: usize, long: bool, x16: u16, x8: u8) -> usize;

    /// The 64 bytes of `bytes` from `at`.
    ///
    /// # Safety
    /// `at + 64 <= bytes.len()` (the scalar token checks it and panics otherwise).
    unsafe fn window(self, bytes: &[u8], at: usize) -> &[u8; 64];

    /// The `N` bytes of `bytes` from `at`.
    ///
    /// # Safety
    /// `at + N <= bytes.len()` (checked by the scalar token).
    unsafe fn read<const N: usize>(self, bytes: &[u8], at: usize) -> [u8; N];

    /// `slice[i]`.
    ///
    /// # Safety
    /// `i < slice.len()` (checked by the scalar token).
    unsafe fn at<T: Copy>(self, slice: &[T], i: usize) -> T;

    /// A hint to load the line holding `p` (any address: a prefetch never faults).
    fn prefetch<T>(self, p: *const T);
}

/// The mask of the first `n` bits (`1 <= n <= 64`): one shift (BMI2's `shrx` in the SIMD
/// walks), no select.
#[inline(always)]
#[cfg(target_arch = "x86_64")]
fn first(n: usize) -> u64 {
    debug_assert!((1..=64).contains(&n));
    u64::MAX >> (64 - n)
}

/// Portable search with checked accesses.
pub use crate::cpu::Scalar;

impl Search for Scalar {
    #[inline(always)]
    fn count(self, w: &[u8; 64], n: usize, long: bool, x16: u16, x8: u8) -> usize {
        if long {
            w.chunks_exact(2)
                .take(n)
                .filter(|b| u16::from_le_bytes([b[0], b[1]]) <= x16)
                .count()
        } else {
            w[..n].iter().filter(|&&b| b <= x8).count()
        }
    }

    #[inline(always)]
    unsafe fn window(self, bytes: &[u8], at: usize) -> &[u8; 64] {
        bytes[at..at + 64].try_into().expect("64 bytes")
    }

    #[inline(always)]
    unsafe fn read<const N: usize>(self, bytes: &[u8], at: usize) -> [u8; N] {
        bytes[at..at + N].try_into().expect("N bytes")
    }

    #[inline(always)]
    unsafe fn at<T: Copy>(self, slice: &[T], i: usize) -> T {
        slice[i]
    }

    #[inline(always)]
    fn prefetch<T>(self, _: *const T) {}
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{first, Search};

    #[inline(always)]
    pub unsafe fn window(bytes: &[u8], at: usize) -> &[u8; 64] {
        debug_assert!(at + 64 <= bytes.len(), "window at {at} of {}", bytes.len());
        // SAFETY: the caller guarantees `at + 64 <= bytes.len()`; `[u8; 64]` has alignment 1.
        unsafe { &*bytes.as_ptr().add(at).cast::<[u8; 64]>() }
    }

    #[inline(always)]
    pub unsafe fn read<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
        debug_assert!(at + N <= bytes.len(), "read at {at} of {}", bytes.len());
        // SAFETY: the caller guarantees `at + N <= bytes.len()`; the read is unaligned.
        unsafe { bytes.as_ptr().add(at).cast::<[u8; N]>().read_unaligned() }
    }

    #[inline(always)]
    pub unsafe fn at<T: Copy>(slice: &[T], i: usize) -> T {
        debug_assert!(i < slice.len(), "index {i} of {}", slice.len());
        // SAFETY: the caller guarantees `i < slice.len()`.
        unsafe { *slice.get_unchecked(i) }
    }

    #[inline(always)]
    pub fn prefetch<T>(p: *const T) {
        // SAFETY: SSE is part of x86-64; a prefetch is a hint that never faults, whatever
        // the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast()) }
    }

    /// The tokens prove BMI2 too (every AVX2 and AVX-512 CPU has it; the walk's variable
    /// shifts are one `shlx`/`shrx` each with it).
    pub use crate::cpu::{Avx2, Avx512};

    impl Search for Avx512 {
        #[inline(always)]
        fn count(self, w: &[u8; 64], n: usize, long: bool, x16: u16, x8: u8) -> usize {
            // SAFETY: the token proves AVX-512F/BW; `w` is 64 readable bytes (unaligned load).
            unsafe {
                let v = _mm512_loadu_si512(w.as_ptr().cast());
                let m16 = u64::from(_mm512_cmple_epu16_mask(v, _mm512_set1_epi16(x16 as i16)));
                let m8 = _mm512_cmple_epu8_mask(v, _mm512_set1_epi8(x8 as i8));
                let m = std::hint::select_unpredictable(long, m16, m8);
                (m & first(n)).count_ones() as usize
            }
        }

        #[inline(always)]
        unsafe fn window(self, bytes: &[u8], at: usize) -> &[u8; 64] {
            // SAFETY: caller's contract.
            unsafe { window(bytes, at) }
        }

        #[inline(always)]
        unsafe fn read<const N: usize>(self, bytes: &[u8], at: usize) -> [u8; N] {
            // SAFETY: caller's contract.
            unsafe { read(bytes, at) }
        }

        #[inline(always)]
        unsafe fn at<T: Copy>(self, slice: &[T], i: usize) -> T {
            // SAFETY: caller's contract.
            unsafe { at(slice, i) }
        }

        #[inline(always)]
        fn prefetch<T>(self, p: *const T) {
            prefetch(p)
        }
    }

    /// Bit `i` set when byte `i` of the 32 at `p` is `<= x` (unsigned: `max(v, x) == x`).
    ///
    /// # Safety
    /// AVX2 is available and `p` points to 32 readable bytes.
    #[inline(always)]
    unsafe fn le8(p: *const u8, x: __m256i) -> u64 {
        // SAFETY: caller's contract; the load is unaligned.
        unsafe {
            let v = _mm256_loadu_si256(p.cast());
            u64::from(_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(v, x), x)) as u32)
        }
    }

    /// Two bits per `u16` (both set when it is `<= x`) for the 16 at `p`.
    ///
    /// # Safety
    /// As for [`le8`].
    #[inline(always)]
    unsafe fn le16(p: *const u8, x: __m256i) -> u64 {
        // SAFETY: caller's contract.
        unsafe {
            let v = _mm256_loadu_si256(p.cast());
            u64::from(_mm256_movemask_epi8(_mm256_cmpeq_epi16(_mm256_max_epu16(v, x), x)) as u32)
        }
    }

    impl Search for Avx2 {
        #[inline(always)]
        fn count(self, w: &[u8; 64], n: usize, long: bool, x16: u16, x8: u8) -> usize {
            // SAFETY: the token proves AVX2; `w` is 64 readable bytes, two 32-byte halves (32
            // short starts are the first half).
            unsafe {
                let x = _mm256_set1_epi16(x16 as i16);
                let m16 = le16(w.as_ptr(), x) | le16(w.as_ptr().add(32), x) << 32;
                let m8 = le8(w.as_ptr(), _mm256_set1_epi8(x8 as i8));
                let long16 = (m16 & first(2 * n)).count_ones() as usize / 2;
                let short8 = (m8 & first(n)).count_ones() as usize;
                std::hint::select_unpredictable(long, long16, short8)
            }
        }

        #[inline(always)]
        unsafe fn window(self, bytes: &[u8], at: usize) -> &[u8; 64] {
            // SAFETY: caller's contract.
            unsafe { window(bytes, at) }
        }

        #[inline(always)]
        unsafe fn read<const N: usize>(self, bytes: &[u8], at: usize) -> [u8; N] {
            // SAFETY: caller's contract.
            unsafe { read(bytes, at) }
        }

        #[inline(always)]
        unsafe fn at<T: Copy>(self, slice: &[T], i: usize) -> T {
            // SAFETY: caller's contract.
            unsafe { at(slice, i) }
        }

        #[inline(always)]
        fn prefetch<T>(self, p: *const T) {
            prefetch(p)
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub use x86::{Avx2, Avx512};

/// NEON runs the portable search: a window search is 32 byte or 16-bit compares and a count,
/// which the compiler vectorises with the baseline NEON instructions already.
#[cfg(target_arch = "aarch64")]
impl Search for crate::cpu::Neon {
    #[inline(always)]
    fn count(self, w: &[u8; 64], n: usize, long: bool, x16: u16, x8: u8) -> usize {
        Scalar.count(w, n, long, x16, x8)
    }

    #[inline(always)]
    unsafe fn window(self, bytes: &[u8], at: usize) -> &[u8; 64] {
        // SAFETY: the scalar token checks; the contract is the caller's either way.
        unsafe { Scalar.window(bytes, at) }
    }

    #[inline(always)]
    unsafe fn read<const N: usize>(self, bytes: &[u8], at: usize) -> [u8; N] {
        // SAFETY: as above.
        unsafe { Scalar.read(bytes, at) }
    }

    #[inline(always)]
    unsafe fn at<T: Copy>(self, slice: &[T], i: usize) -> T {
        // SAFETY: as above.
        unsafe { Scalar.at(slice, i) }
    }

    #[inline(always)]
    fn prefetch<T>(self, p: *const T) {
        Scalar.prefetch(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn counts<S: Search>(s: S, w: &[u8; 64], n: usize, x: u16) -> (usize, usize) {
        (
            s.count(w, n, false, x, x as u8),
            s.count(w, n, true, x, x as u8),
        )
    }

    proptest! {
        /// Every backend counts like the scalar one, including bytes with the top bit set
        /// (an unsigned compare done as a signed one fails there).
        #[test]
        fn backends_count_like_scalar(
            w in prop::array::uniform32(any::<u8>()),
            v in prop::array::uniform32(any::<u8>()),
            n in 1usize..=32, x in any::<u16>(),
        ) {
            let mut win = [0u8; 64];
            win[..32].copy_from_slice(&w);
            win[32..].copy_from_slice(&v);
            let want = (
                win[..n].iter().filter(|&&b| b <= x as u8).count(),
                (0..n).filter(|&i| u16::from_le_bytes([win[2 * i], win[2 * i + 1]]) <= x).count(),
            );
            prop_assert_eq!(counts(Scalar, &win, n, x), want);
            #[cfg(target_arch = "x86_64")]
            {
                if let Some(t) = Avx2::new() {
                    prop_assert_eq!(counts(t, &win, n, x), want, "avx2");
                }
                if let Some(t) = Avx512::new() {
                    prop_assert_eq!(counts(t, &win, n, x), want, "avx512");
                }
            }
        }
    }
}
