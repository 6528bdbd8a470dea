//! The two bit operations a path-compressed trie needs beyond [`Address`]: the length of the
//! common prefix of two keys, and the bit at a position.

use crate::addr::Address;

/// [`Address`] plus bit access, for `u32` and `u128`.
pub trait Bits: Address {
    /// Number of leading bits `self` and `other` share (`BITS` when equal).
    fn common(self, other: Self) -> u8;
    /// The bit at position `i` counted from the most significant (`i < BITS`), as 0 or 1.
    fn bit(self, i: u8) -> usize;
}

impl Bits for u32 {
    #[inline(always)]
    fn common(self, other: Self) -> u8 {
        (self ^ other).leading_zeros() as u8
    }
    #[inline(always)]
    fn bit(self, i: u8) -> usize {
        ((self >> (31 - u32::from(i))) & 1) as usize
    }
}

impl Bits for u128 {
    #[inline(always)]
    fn common(self, other: Self) -> u8 {
        (self ^ other).leading_zeros() as u8
    }
    #[inline(always)]
    fn bit(self, i: u8) -> usize {
        ((self >> (127 - u32::from(i))) & 1) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_prefix_and_bits_at_both_ends() {
        assert_eq!(0u32.common(0), 32);
        assert_eq!(0u32.common(1), 31);
        assert_eq!(0u32.common(u32::MAX), 0);
        assert_eq!(0u128.common(0), 128);
        assert_eq!(0u128.common(1 << 127), 0);
        assert_eq!(0x8000_0000u32.bit(0), 1);
        assert_eq!(1u32.bit(31), 1);
        assert_eq!(1u32.bit(30), 0);
        assert_eq!(1u128.bit(127), 1);
        assert_eq!((1u128 << 127).bit(0), 1);
    }
}
