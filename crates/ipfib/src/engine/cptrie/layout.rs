//! What CP-Trie's arrays hold.
//!
//! * `direct[top s bits]`: [`LEAF_TAG`] plus a next-hop index when the whole block has one
//!   answer, else the number of the block's root node.
//! * `chunks`: a node of stride `k` (`2^k` slots, `6 <= k <= 16`) is `2^(k-6)` consecutive
//!   24-byte [`Chunk`]s, node `n`'s at `n << (k - 6)`. Each chunk holds 64 slots' bitmaps and
//!   the *cumulative* counts of the node's children and leaves before it (the CP-Trie idea,
//!   Islam & Khan, HPSR 2021), so a step reads one chunk and does one 64-bit `popcnt` per
//!   bitmap, whatever the stride: Poptrie's counting, at 8 to 16 bits per node.
//! * `leaves`: next-hop indices, a node's leaves contiguous and run-compressed across its
//!   chunks (a slot repeating the previous leaf slot's answer stores nothing).
//! * `hops`: the next hops, index 0 meaning "no route".

use crate::addr::Address;

/// Set in a direct-table entry that is an answer, not a node number.
pub const LEAF_TAG: u32 = 1 << 31;

/// The narrowest and widest strides a node may have.
pub const MIN_STRIDE: u32 = 6;
/// See [`MIN_STRIDE`].
pub const MAX_STRIDE: u32 = 16;

/// 64 slots of one node, with the node's counts before them.
///
/// Slot `w` is a child when bit `w` of `vector` is set, node number
/// `child_base + popcnt(vector & bits_through(w))`; else a leaf at
/// `leaf_base + popcnt(leafvec & bits_through(w))`. The bases are the node's first child or
/// leaf plus the count in earlier chunks, minus one (wrapping): the cumulative popcount.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Chunk {
    /// Bit `w` set: slot `w` is a child node.
    pub vector: u64,
    /// Bit `w` set: slot `w` is a leaf starting a new run of answers.
    pub leafvec: u64,
    /// Children before this chunk plus the node's first child, minus one (wrapping).
    pub child_base: u32,
    /// Leaves before this chunk plus the node's first leaf, minus one (wrapping).
    pub leaf_base: u32,
}

/// Where one step leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The slot is a child node.
    pub is_node: bool,
    /// The child's node number (meaningful when `is_node`).
    pub child: u32,
    /// The leaf's position (meaningful when not `is_node`).
    pub leaf: u32,
}

impl Chunk {
    /// Both successors of slot `w` (`w < 64`), without a branch.
    #[inline(always)]
    pub fn step(&self, w: u32) -> Step {
        let bit = 1u64 << w;
        let through = bit | (bit - 1);
        Step {
            is_node: self.vector & bit != 0,
            child: self
                .child_base
                .wrapping_add((self.vector & through).count_ones()),
            leaf: self
                .leaf_base
                .wrapping_add((self.leafvec & through).count_ones()),
        }
    }
}

/// The bit extraction a walk needs, per family.
pub trait Family: Address {
    /// The top `bits` bits (`1..=24`, at most `BITS`) as a direct-table index.
    fn top(self, bits: u32) -> usize;

    /// The `k` bits (`k <= 16`) at `offset` (`offset < BITS`), most significant first,
    /// padded with zeros past the end of the address.
    fn chunk(self, offset: u32, k: u32) -> u32;
}

impl Family for u32 {
    #[inline(always)]
    fn top(self, bits: u32) -> usize {
        (self >> (32 - bits)) as usize
    }

    #[inline(always)]
    fn chunk(self, offset: u32, k: u32) -> u32 {
        (((u64::from(self) << 32) << offset) >> (64 - k)) as u32
    }
}

impl Family for u128 {
    #[inline(always)]
    fn top(self, bits: u32) -> usize {
        (self >> (128 - bits)) as usize
    }

    #[inline(always)]
    fn chunk(self, offset: u32, k: u32) -> u32 {
        ((self << offset) >> (128 - k)) as u32
    }
}

/// A leaf: a next-hop index stored as `u16` or `u32`.
pub trait LeafWord: Copy + Default + std::fmt::Debug + Send + Sync + 'static {
    /// The index.
    fn index(self) -> u32;
}

impl LeafWord for u16 {
    #[inline(always)]
    fn index(self) -> u32 {
        u32::from(self)
    }
}

impl LeafWord for u32 {
    #[inline(always)]
    fn index(self) -> u32 {
        self
    }
}

/// The leaves in the narrowest width the next-hop count allows.
#[derive(Clone, Debug)]
pub enum Leaves {
    /// At most 2^16 next-hop indices.
    Narrow(Box<[u16]>),
    /// More.
    Wide(Box<[u32]>),
}

impl Leaves {
    /// Number of leaves.
    pub fn len(&self) -> usize {
        match self {
            Leaves::Narrow(l) => l.len(),
            Leaves::Wide(l) => l.len(),
        }
    }

    /// Bytes of the array.
    pub fn bytes(&self) -> usize {
        match self {
            Leaves::Narrow(l) => l.len() * 2,
            Leaves::Wide(l) => l.len() * 4,
        }
    }

    /// The next-hop index of leaf `i` (checked).
    pub fn get(&self, i: usize) -> Option<u32> {
        match self {
            Leaves::Narrow(l) => l.get(i).map(|x| x.index()),
            Leaves::Wide(l) => l.get(i).map(|x| x.index()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_of_any_width_pad_with_zeros() {
        let a: u32 = 0b1011_0000_0000_0000_0000_0000_0000_0011;
        assert_eq!(a.chunk(0, 8), 0b1011_0000);
        assert_eq!(a.chunk(24, 8), 0b11);
        assert_eq!(a.chunk(30, 8), 0b1100_0000, "2 real bits, 6 padding zeros");
        assert_eq!(a.chunk(16, 16), 0b11);
        let b: u128 = (0b10u128 << 126) | 0b101;
        assert_eq!(b.chunk(0, 12), 0b1000_0000_0000);
        assert_eq!(b.chunk(120, 8), 0b101);
        assert_eq!(b.chunk(126, 8), 0b0100_0000);
    }

    #[test]
    fn a_step_counts_through_its_own_slot_from_the_cumulative_base() {
        let c = Chunk {
            vector: 0b1010,
            leafvec: 0b0101,
            child_base: 9,
            leaf_base: 4,
        };
        assert_eq!(c.step(1).child, 10);
        assert_eq!(c.step(3).child, 11);
        assert!(!c.step(2).is_node);
        assert_eq!(c.step(2).leaf, 6);
        assert_eq!(c.step(63).leaf, 6);
        let run = Chunk {
            leafvec: 0,
            vector: 0,
            ..c
        };
        assert_eq!(
            run.step(0).leaf,
            4,
            "a run from the previous chunk: its last leaf"
        );
    }
}
