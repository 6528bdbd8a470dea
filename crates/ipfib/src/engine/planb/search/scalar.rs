//! The portable node search: a branch-free count in safe Rust.

use super::Search;
use crate::engine::planb::line::{Line16, Line32};

pub use crate::cpu::Scalar;

impl Search for Scalar {
    #[inline(always)]
    fn rank32<const KEYS: usize>(self, line: &Line32, x: u32) -> u32 {
        line.0[..KEYS].iter().map(|&k| u32::from(k < x)).sum()
    }

    /// Checked: the portable backend has no unchecked access (the `unsafe` is the trait's
    /// contract, which this implementation does not need).
    #[inline(always)]
    unsafe fn at<T>(self, slice: &[T], i: usize) -> &T {
        &slice[i]
    }

    /// Checked, like [`Scalar::at`].
    #[inline(always)]
    unsafe fn at_mut<T>(self, slice: &mut [T], i: usize) -> &mut T {
        &mut slice[i]
    }

    #[inline(always)]
    fn prefetch<T>(self, _: &T) {}

    #[inline(always)]
    fn prefetch_input<T, const NTA: bool>(self, _: &[T]) {}

    #[inline(always)]
    fn rank16<const KEYS: usize>(self, line: &Line16, x: u16) -> u32 {
        line.0[..KEYS].iter().map(|&k| u32::from(k < x)).sum()
    }
}
