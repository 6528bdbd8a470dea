//! The portable node search: a branch-free count in safe Rust.

use super::Search;
use crate::engine::planb::layout::{Key, Node16, Node32};

/// Portable backend, available everywhere.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scalar;

impl Search for Scalar {
    #[inline(always)]
    fn rank32(self, node: &Node32, x: u32) -> u32 {
        <u32 as Key>::keys(node)
            .iter()
            .map(|&k| u32::from(k < x))
            .sum()
    }

    #[inline(always)]
    fn at<T>(self, slice: &[T], i: usize) -> &T {
        &slice[i]
    }

    #[inline(always)]
    fn rank16(self, node: &Node16, x: u16) -> u32 {
        <u16 as Key>::keys(node)
            .iter()
            .map(|&k| u32::from(k < x))
            .sum()
    }
}
