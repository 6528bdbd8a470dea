//! What Poptrie's arrays hold, written and read in one place.
//!
//! * `direct[top s bits]`: [`LEAF_TAG`] plus a next-hop index when the whole `2^(W-s)` block
//!   has one answer, else the index of the block's root node.
//! * `nodes`: 24-byte [`Node`]s, a node's children contiguous, so a child is found by
//!   counting set bits (`popcnt`) instead of storing 64 pointers.
//! * `leaves`: next-hop indices (`u16` when the table has fewer than 2^16 distinct next hops,
//!   else `u32`), a node's leaves contiguous and compressed: a slot that repeats the previous
//!   leaf slot's answer stores nothing.
//! * `hops`: the next hops themselves, index 0 meaning "no route", so every `u32` is a valid
//!   next hop and "no route" is never a reserved value.

use crate::addr::Address;

/// Address bits one node consumes (64 slots, one bit per slot in a `u64`).
pub const STRIDE: u32 = 6;

/// Set in a direct-table entry that is an answer (a next-hop index), not a node index. Node
/// indices and next-hop indices must therefore stay below 2^31 (a typed build error if not).
pub const LEAF_TAG: u32 = 1 << 31;

/// One 64-ary node (Poptrie's "internal node with leaf compression", paper Fig. 3 + §3.3).
///
/// Slot `v` (the next 6 address bits) is a child node when bit `v` of `vector` is set; its
/// index is `child_base + popcnt(vector & bits_through(v))`. Otherwise it is a leaf at
/// `leaf_base + popcnt(leafvec & bits_through(v))`: `leafvec` marks the leaf slots that start
/// a new run of answers, so a run of equal leaves is stored once. The bases are stored one
/// below the first child / first leaf (wrapping), which saves the `- 1` per step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Node {
    /// Bit `v` set: slot `v` is a child node.
    pub vector: u64,
    /// Bit `v` set: slot `v` is a leaf whose answer differs from the previous leaf slot's (or
    /// the first leaf slot). Never set on a node slot.
    pub leafvec: u64,
    /// Index of the first child, minus one (wrapping).
    pub child_base: u32,
    /// Index of the first leaf, minus one (wrapping).
    pub leaf_base: u32,
}

/// Where one step from a node leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The slot is a child node.
    pub is_node: bool,
    /// The child's index (meaningful when `is_node`).
    pub child: u32,
    /// The leaf's position (meaningful when not `is_node`).
    pub leaf: u32,
}

impl Node {
    /// Both candidate successors of slot `v` (`v < 64`), computed without a branch so the
    /// batched walk can select between them.
    #[inline(always)]
    pub fn step(&self, v: u32) -> Step {
        let bit = 1u64 << v;
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

    /// Number of child nodes.
    pub fn children(&self) -> u32 {
        self.vector.count_ones()
    }

    /// Number of stored leaves.
    pub fn leaves(&self) -> u32 {
        self.leafvec.count_ones()
    }
}

/// The bit extraction a walk needs, per family.
pub trait Family: Address {
    /// The top `bits` bits (`1..=24`, at most `BITS`) as a direct-table index.
    fn top(self, bits: u32) -> usize;

    /// The 6 bits at `offset` (`offset < BITS`), most significant first, padded with zeros
    /// past the end of the address (the last level of a 32- or 128-bit key is partial: 32 and
    /// 128 are not multiples of 6 past any direct-table width, and the builder fills the slots
    /// the padding cannot reach with the reachable slot's answer).
    fn chunk(self, offset: u32) -> u32;
}

impl Family for u32 {
    #[inline(always)]
    fn top(self, bits: u32) -> usize {
        (self >> (32 - bits)) as usize
    }

    #[inline(always)]
    fn chunk(self, offset: u32) -> u32 {
        (((u64::from(self) << 32) << offset) >> 58) as u32
    }
}

impl Family for u128 {
    #[inline(always)]
    fn top(self, bits: u32) -> usize {
        (self >> (128 - bits)) as usize
    }

    #[inline(always)]
    fn chunk(self, offset: u32) -> u32 {
        ((self << offset) >> 122) as u32
    }
}

/// A leaf: a next-hop index stored as `u16` or `u32`.
pub trait LeafWord: Copy + Default + std::fmt::Debug + Send + Sync + 'static {
    /// The index (lossless).
    fn index(self) -> u32;
    /// The leaf for `index`, which the caller has checked fits.
    fn from_index(index: u32) -> Self;
}

impl LeafWord for u16 {
    #[inline(always)]
    fn index(self) -> u32 {
        u32::from(self)
    }
    fn from_index(index: u32) -> Self {
        index as u16
    }
}

impl LeafWord for u32 {
    #[inline(always)]
    fn index(self) -> u32 {
        self
    }
    fn from_index(index: u32) -> Self {
        index
    }
}

/// The leaf array in the narrowest width the table's next-hop count allows (leaves are the
/// largest part of a Poptrie after the nodes, and half of them fit twice as many per line).
#[derive(Clone, Debug)]
pub enum Leaves {
    /// Fewer than 2^16 distinct next hops.
    Narrow(Box<[u16]>),
    /// Up to 2^31 - 1 distinct next hops.
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

    /// Bytes of one leaf.
    pub fn width(&self) -> usize {
        match self {
            Leaves::Narrow(_) => 2,
            Leaves::Wide(_) => 4,
        }
    }

    /// Bytes of the array.
    pub fn bytes(&self) -> usize {
        self.len() * self.width()
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
    fn chunks_pad_with_zeros_past_the_end() {
        let a: u32 = 0b1011_0000_0000_0000_0000_0000_0000_0011;
        assert_eq!(a.chunk(0), 0b101100);
        assert_eq!(a.chunk(30), 0b110000, "2 real bits, 4 padding zeros");
        assert_eq!(a.top(4), 0b1011);
        let b: u128 = (0b10u128 << 126) | 0b101;
        assert_eq!(b.chunk(0), 0b100000);
        assert_eq!(b.chunk(126), 0b010000);
        assert_eq!(b.chunk(122), 0b000101);
        assert_eq!(b.top(2), 0b10);
        assert_eq!(u128::MAX.top(24), (1 << 24) - 1);
    }

    #[test]
    fn a_step_counts_through_its_own_slot() {
        let n = Node {
            vector: 0b1010,
            leafvec: 0b0101,
            child_base: 9,
            leaf_base: u32::MAX,
        };
        assert_eq!(
            n.step(1),
            Step {
                is_node: true,
                child: 10,
                leaf: 0
            }
        );
        assert_eq!(n.step(3).child, 11);
        assert!(!n.step(2).is_node);
        assert_eq!(n.step(2).leaf, 1);
        assert_eq!(n.step(63).leaf, 1, "the run of slot 2 reaches the end");
        assert_eq!(n.step(0).leaf, 0, "base 0 stored as u32::MAX wraps");
    }
}
