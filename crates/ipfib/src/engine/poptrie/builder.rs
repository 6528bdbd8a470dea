//! Route table → Poptrie arrays.
//!
//! The trie is built from the table's merged elementary intervals
//! ([`crate::interval::Intervals`]), not by inserting routes one by one: a slot of a node is a
//! leaf exactly when no interval boundary falls strictly inside the address block it covers,
//! and its answer is the interval's at the block's first address. So the result depends only
//! on the route *set* (insertion order cannot matter, unlike the reference C code, which
//! answers "no route" under a lone /16 unless routes arrive shortest first), every node has
//! at least two answers below it (a subtree with one answer is always a leaf), and the edge
//! cases of nesting, shared starts and the top of the space are the interval sweep's, which
//! is tested on its own.
//!
//! Nodes are laid out breadth first: a node's children are pushed when it is built, so they
//! are contiguous (what `popcnt` indexing needs) and each level is in address order. Each
//! pending node carries the interval cursor at its first address, so building a node costs
//! its 64 slots plus the boundaries inside it: O(nodes · 64 + intervals · levels) in all.

use super::layout::{Node, LEAF_TAG, STRIDE};
use crate::addr::Address;
use crate::error::BuildError;
use crate::interval::Intervals;
use crate::route_table::{NextHop, RouteTable};

/// What the builder hands over (leaves still as `u32` indices; the caller narrows them).
pub struct Built {
    pub direct: Vec<u32>,
    pub nodes: Vec<Node>,
    pub leaves: Vec<u32>,
    /// Next hops by index, `hops[0]` standing for "no route".
    pub hops: Vec<NextHop>,
    /// Nodes per level (level 0 = the roots the direct table points to).
    pub levels: Vec<usize>,
}

/// A node waiting to be built: the first address of its block (left-aligned to 128 bits, as
/// [`Address::to_u128_left`] gives), the offset of its 6 bits, and the interval holding its
/// first address.
#[derive(Clone, Copy, Debug)]
struct Pending {
    lo: u128,
    offset: u32,
    cursor: usize,
}

/// The intervals as left-aligned starts and next-hop indices.
struct Scanner {
    starts: Vec<u128>,
    values: Vec<u32>,
}

impl Scanner {
    /// The answer at `lo` and whether another interval starts inside `lo..=lo + 2^shift - 1`
    /// (`shift < 128`). `cursor` is an interval at or before `lo` and moves to the one holding
    /// it; blocks are scanned in address order, so a node's scan is linear.
    #[inline]
    fn block(&self, lo: u128, shift: u32, cursor: &mut usize) -> (u32, bool) {
        while *cursor + 1 < self.starts.len() && self.starts[*cursor + 1] <= lo {
            *cursor += 1;
        }
        let hi = lo | ((1u128 << shift) - 1);
        let split = *cursor + 1 < self.starts.len() && self.starts[*cursor + 1] <= hi;
        (self.values[*cursor], split)
    }
}

fn limit(reason: String) -> BuildError {
    BuildError::Unsupported {
        engine: "poptrie",
        reason,
    }
}

/// Builds the arrays for `table` with a direct table of `2^direct_bits` entries
/// (`1 <= direct_bits <= min(24, BITS)`, checked by the caller).
pub fn build<A: Address>(table: &RouteTable<A>, direct_bits: u32) -> Result<Built, BuildError> {
    let width = u32::from(A::BITS);
    let intervals = Intervals::from_table(table);
    let mut hops: Vec<NextHop> = intervals.values().iter().flatten().copied().collect();
    hops.sort_unstable();
    hops.dedup();
    if hops.len() >= LEAF_TAG as usize {
        return Err(limit(format!(
            "{} distinct next hops; at most {} fit a next-hop index",
            hops.len(),
            LEAF_TAG - 1
        )));
    }
    let scanner = Scanner {
        starts: intervals
            .starts()
            .iter()
            .map(|a| a.to_u128_left())
            .collect(),
        values: intervals
            .values()
            .iter()
            .map(|v| {
                v.map_or(0, |h| {
                    hops.binary_search(&h).expect("collected above") as u32 + 1
                })
            })
            .collect(),
    };
    hops.insert(0, 0);

    let mut pending: Vec<Pending> = Vec::new();
    let mut direct = Vec::with_capacity(1 << direct_bits);
    let mut cursor = 0;
    for j in 0..1u128 << direct_bits {
        let lo = j << (128 - direct_bits);
        let (value, split) = scanner.block(lo, 128 - direct_bits, &mut cursor);
        if split {
            direct.push(pending.len() as u32);
            pending.push(Pending {
                lo,
                offset: direct_bits,
                cursor,
            });
        } else {
            direct.push(LEAF_TAG | value);
        }
    }

    let mut nodes: Vec<Node> = Vec::with_capacity(pending.len() * 2);
    let mut leaves: Vec<u32> = Vec::new();
    let mut levels: Vec<usize> = Vec::new();
    let mut slots = [(0u32, false); 64];
    let mut i = 0;
    while i < pending.len() {
        let p = pending[i];
        i += 1;
        let level = ((p.offset - direct_bits) / STRIDE) as usize;
        if levels.len() <= level {
            levels.resize(level + 1, 0);
        }
        levels[level] += 1;

        let mut cursor = p.cursor;
        if p.offset + STRIDE <= width {
            // A full level: slot `j` is the block of `2^shift` left-aligned addresses.
            let shift = 128 - p.offset - STRIDE;
            for (j, slot) in slots.iter_mut().enumerate() {
                *slot = scanner.block(p.lo | ((j as u128) << shift), shift, &mut cursor);
            }
        } else {
            // The last, partial level: only `width - offset` real bits; the padding bits
            // repeat the reachable slot's answer, so the slots compress into its run. Each
            // real slot is one address, so nothing splits.
            let pad = p.offset + STRIDE - width;
            for (j, slot) in slots.iter_mut().enumerate() {
                let lo = p.lo | (((j as u128) >> pad) << (128 - width));
                *slot = (scanner.block(lo, 128 - width, &mut cursor).0, false);
            }
        }

        let first_child = pending.len();
        let first_leaf = leaves.len();
        let mut node = Node {
            vector: 0,
            leafvec: 0,
            child_base: (first_child as u32).wrapping_sub(1),
            leaf_base: (first_leaf as u32).wrapping_sub(1),
        };
        let mut previous: Option<u32> = None;
        let mut cursor = p.cursor;
        let shift = 128u32.saturating_sub(p.offset + STRIDE);
        for (j, &(value, split)) in slots.iter().enumerate() {
            if split {
                let lo = p.lo | ((j as u128) << shift);
                // Move the cursor to the child's first address (the slots before it only
                // advanced it).
                while cursor + 1 < scanner.starts.len() && scanner.starts[cursor + 1] <= lo {
                    cursor += 1;
                }
                node.vector |= 1 << j;
                pending.push(Pending {
                    lo,
                    offset: p.offset + STRIDE,
                    cursor,
                });
            } else if previous != Some(value) {
                node.leafvec |= 1 << j;
                leaves.push(value);
                previous = Some(value);
            }
        }
        nodes.push(node);
        if pending.len() >= LEAF_TAG as usize {
            return Err(limit(format!(
                "more than {} nodes; node indices are 31 bits",
                LEAF_TAG - 1
            )));
        }
        if leaves.len() > u32::MAX as usize {
            return Err(limit(format!(
                "more than {} leaves; leaf indices are 32 bits",
                u32::MAX
            )));
        }
    }
    Ok(Built {
        direct,
        nodes,
        leaves,
        hops,
        levels,
    })
}
