//! The memory layout PlanB searches: what a key is for each family, and the 64-byte node.
//!
//! A lookup consumes the address in two parts. The top 16 bits index a direct table (DXR's and
//! Poptrie's trick: it replaces the two or three widest tree levels by one load). The next
//! bits, up to the family's *coarse* width (32 for IPv4, 48 for IPv6), are the key searched in
//! that chunk's tree. Because a chunk's keys share their top 16 bits, the key is narrower than
//! the address: `u16` for IPv4 (31 keys and a pad slot, fan-out 32 per cache line) and `u32`
//! for IPv6 (15 keys and a pad slot, fan-out 16, about twice the fan-out of the paper's 8 ×
//! `u64` node). IPv6 boundaries
//! finer than /48 are rare in real tables; the /48 cells that contain them are resolved by a
//! second stage ([`super::fallback`]), so every prefix length up to /128 stays exact.

use std::fmt::Debug;

use super::search::Search;
use crate::addr::Address;

/// Bits resolved by the direct table in front of the trees.
pub const DIRECT_BITS: u32 = 16;

/// A key type of the chunk trees: the address bits just below the direct-table bits.
pub trait Key: Copy + Ord + Default + Debug + Send + Sync + 'static {
    /// Padding for unused key slots: never counted as "less than" any query.
    const PAD: Self;
    /// Key slots per 64-byte node. The last slot is always padding, so a node holds
    /// `SLOTS - 1` keys, its rank is in `0..SLOTS`, and the fan-out is `SLOTS`, a power of two:
    /// the child index is a shift and an add, and a branch-free binary search over the node
    /// takes exactly `log2(SLOTS)` steps (the AVX-512 gather walk relies on both).
    const SLOTS: u32;
    /// One cache line of keys.
    type Node: Copy + Debug + Send + Sync + 'static;

    /// A node holding `keys` (at most `SLOTS - 1`) and padding.
    fn node(keys: &[Self]) -> Self::Node;
    /// The keys of a node (for the scalar search and for tests).
    fn keys(node: &Self::Node) -> &[Self];
    /// The low bits of a coarse address, the bits this key type holds.
    fn from_coarse(coarse: u64) -> Self;
    /// The key zero-extended to 32 bits.
    fn into_u32(self) -> u32;
    /// Number of keys of `node` less than `x`, with the node search `s`.
    fn rank<S: Search>(s: S, node: &Self::Node, x: Self) -> u32;

    /// Gathers one key per lane for the AVX-512 gather walk ([`super::gather`]): key `idx` (in
    /// key units from the start of `nodes`), zero-extended to 32 bits.
    ///
    /// # Safety
    /// AVX-512F must be available, and every index must name a key inside the node array
    /// that is not the last slot of its node.
    #[cfg(target_arch = "x86_64")]
    unsafe fn gather(
        nodes: *const Self::Node,
        idx: std::arch::x86_64::__m512i,
    ) -> std::arch::x86_64::__m512i;
}

/// 32 keys of 16 bits in one cache line (IPv4 chunks).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node16(pub [u16; 32]);

/// 16 keys of 32 bits in one cache line (IPv6 chunks).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node32(pub [u32; 16]);

impl Key for u16 {
    const PAD: Self = u16::MAX;
    const SLOTS: u32 = 32;
    type Node = Node16;

    fn node(keys: &[u16]) -> Node16 {
        let mut n = [u16::MAX; 32];
        n[..keys.len()].copy_from_slice(keys);
        Node16(n)
    }
    #[inline(always)]
    fn keys(node: &Node16) -> &[u16] {
        &node.0
    }
    #[inline(always)]
    fn from_coarse(coarse: u64) -> u16 {
        coarse as u16
    }
    #[inline(always)]
    fn into_u32(self) -> u32 {
        u32::from(self)
    }
    #[inline(always)]
    fn rank<S: Search>(s: S, node: &Node16, x: u16) -> u32 {
        s.rank16(node, x)
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn gather(
        nodes: *const Node16,
        idx: std::arch::x86_64::__m512i,
    ) -> std::arch::x86_64::__m512i {
        use std::arch::x86_64::{_mm512_and_si512, _mm512_i32gather_epi32, _mm512_set1_epi32};
        // SAFETY: the caller guarantees AVX-512F and an in-bounds key that is not a node's last
        // slot; with scale 2 each lane reads its key and the next one, in the same node.
        unsafe {
            _mm512_and_si512(
                _mm512_i32gather_epi32::<2>(idx, nodes.cast()),
                _mm512_set1_epi32(0xffff),
            )
        }
    }
}

impl Key for u32 {
    const PAD: Self = u32::MAX;
    const SLOTS: u32 = 16;
    type Node = Node32;

    fn node(keys: &[u32]) -> Node32 {
        let mut n = [u32::MAX; 16];
        n[..keys.len()].copy_from_slice(keys);
        Node32(n)
    }
    #[inline(always)]
    fn keys(node: &Node32) -> &[u32] {
        &node.0
    }
    #[inline(always)]
    fn from_coarse(coarse: u64) -> u32 {
        coarse as u32
    }
    #[inline(always)]
    fn into_u32(self) -> u32 {
        self
    }
    #[inline(always)]
    fn rank<S: Search>(s: S, node: &Node32, x: u32) -> u32 {
        s.rank32(node, x)
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn gather(
        nodes: *const Node32,
        idx: std::arch::x86_64::__m512i,
    ) -> std::arch::x86_64::__m512i {
        // SAFETY: the caller guarantees AVX-512F and an in-bounds key (scale 4 = one u32).
        unsafe { std::arch::x86_64::_mm512_i32gather_epi32::<4>(idx, nodes.cast()) }
    }
}

/// How PlanB splits an address of one family: implemented for `u32` and `u128`.
pub trait Family: Address {
    /// The chunk-tree key.
    type Key: Key;
    /// Top bits resolved by direct table + tree (32 for IPv4, 48 for IPv6).
    const COARSE_BITS: u32;

    /// The top [`Family::COARSE_BITS`] bits of the address.
    fn coarse(self) -> u64;
    /// The first address of a coarse cell.
    fn from_coarse(coarse: u64) -> Self;
    /// True when the bits below the coarse bits are all zero (a cell-aligned boundary).
    fn is_cell_aligned(self) -> bool;
}

impl Family for u32 {
    type Key = u16;
    const COARSE_BITS: u32 = 32;

    #[inline(always)]
    fn coarse(self) -> u64 {
        u64::from(self)
    }
    #[inline(always)]
    fn from_coarse(coarse: u64) -> u32 {
        coarse as u32
    }
    #[inline(always)]
    fn is_cell_aligned(self) -> bool {
        true
    }
}

impl Family for u128 {
    type Key = u32;
    const COARSE_BITS: u32 = 48;

    #[inline(always)]
    fn coarse(self) -> u64 {
        (self >> 80) as u64
    }
    #[inline(always)]
    fn from_coarse(coarse: u64) -> u128 {
        u128::from(coarse) << 80
    }
    #[inline(always)]
    fn is_cell_aligned(self) -> bool {
        self & ((1u128 << 80) - 1) == 0
    }
}

/// The direct-table index (top 16 bits) of a coarse address.
#[inline(always)]
pub fn chunk_of<A: Family>(coarse: u64) -> usize {
    (coarse >> (A::COARSE_BITS - DIRECT_BITS)) as usize
}

/// Fan-out of an inner node, and value slots per leaf: one more than the keys of a node.
#[inline(always)]
pub const fn fanout<K: Key>() -> u32 {
    K::SLOTS
}

/// Keys a node holds.
#[inline(always)]
pub const fn keys_per_node<K: Key>() -> usize {
    K::SLOTS as usize - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_are_one_cache_line() {
        assert_eq!(std::mem::size_of::<Node16>(), 64);
        assert_eq!(std::mem::align_of::<Node16>(), 64);
        assert_eq!(std::mem::size_of::<Node32>(), 64);
        assert_eq!(std::mem::align_of::<Node32>(), 64);
    }

    #[test]
    fn coarse_split_of_ipv6() {
        let a: u128 = 0x2001_0db8_0001_0000_0000_0000_0000_0001;
        assert_eq!(a.coarse(), 0x2001_0db8_0001);
        assert_eq!(chunk_of::<u128>(a.coarse()), 0x2001);
        assert_eq!(<u32 as Key>::from_coarse(a.coarse()), 0x0db8_0001);
        assert!(!a.is_cell_aligned());
        assert!(u128::from_coarse(a.coarse()).is_cell_aligned());
    }

    #[test]
    fn coarse_split_of_ipv4() {
        let a: u32 = 0xc0a8_0102;
        assert_eq!(chunk_of::<u32>(a.coarse()), 0xc0a8);
        assert_eq!(<u16 as Key>::from_coarse(a.coarse()), 0x0102);
    }
}
