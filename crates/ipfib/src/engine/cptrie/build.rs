//! Route table → CP-Trie arrays, from the table's merged elementary intervals
//! ([`crate::interval::Intervals`]) as Poptrie's builder does: a slot is a leaf exactly when
//! no interval boundary falls strictly inside its block, with the interval's answer at the
//! block's first address. The result depends only on the route *set* (never on insertion
//! order), and a node exists only where answers differ below it.
//!
//! Nodes are laid out breadth first, a node's children contiguous (what `popcnt` indexing
//! needs); each pending node carries the interval cursor at its first address, so a node
//! costs its `2^k` slots plus the boundaries inside it.

use super::layout::{Chunk, LEAF_TAG, MIN_STRIDE};
use crate::addr::Address;
use crate::error::BuildError;
use crate::interval::Intervals;
use crate::route_table::{NextHop, RouteTable};

/// What the builder hands over (leaves as `u32`; the caller narrows them).
pub struct Built {
    pub direct: Vec<u32>,
    pub chunks: Vec<Chunk>,
    pub leaves: Vec<u32>,
    /// `hops[0]` stands for "no route".
    pub hops: Vec<NextHop>,
    /// Nodes per level (level 0 = the roots the direct table points to).
    pub levels: Vec<usize>,
}

/// A node waiting to be built: its first address (left-aligned to 128 bits), the offset of
/// its bits, and the interval holding its first address.
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
    /// Moves `cursor` (an interval at or before `lo`) to the one holding `lo`.
    #[inline]
    fn seek(&self, lo: u128, cursor: &mut usize) {
        while *cursor + 1 < self.starts.len() && self.starts[*cursor + 1] <= lo {
            *cursor += 1;
        }
    }

    /// The answer at `lo` and whether another interval starts inside
    /// `lo..=lo + 2^shift - 1` (`shift < 128`).
    #[inline]
    fn block(&self, lo: u128, shift: u32, cursor: &mut usize) -> (u32, bool) {
        self.seek(lo, cursor);
        let hi = lo | ((1u128 << shift) - 1);
        let split = *cursor + 1 < self.starts.len() && self.starts[*cursor + 1] <= hi;
        (self.values[*cursor], split)
    }
}

fn limit(reason: String) -> BuildError {
    BuildError::Unsupported {
        engine: "cptrie",
        reason,
    }
}

/// Builds the arrays for `table` with a direct table of `2^direct_bits` entries and nodes of
/// `stride` bits (both checked by the caller).
pub fn build<A: Address>(
    table: &RouteTable<A>,
    direct_bits: u32,
    stride: u32,
) -> Result<Built, BuildError> {
    let width = u32::from(A::BITS);
    let intervals = Intervals::from_table(table);
    let mut hops: Vec<NextHop> = intervals.values().iter().flatten().copied().collect();
    hops.sort_unstable();
    hops.dedup();
    if hops.len() >= LEAF_TAG as usize {
        return Err(limit(format!("{} distinct next hops", hops.len())));
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

    let fanout = 1usize << stride;
    let mut chunks: Vec<Chunk> = Vec::with_capacity(pending.len() << (stride - MIN_STRIDE));
    let mut leaves: Vec<u32> = Vec::new();
    let mut levels: Vec<usize> = Vec::new();
    let mut slots = vec![(0u32, false); fanout];
    let mut i = 0;
    while i < pending.len() {
        let p = pending[i];
        i += 1;
        let level = ((p.offset - direct_bits) / stride) as usize;
        if levels.len() <= level {
            levels.resize(level + 1, 0);
        }
        levels[level] += 1;

        let mut cursor = p.cursor;
        if p.offset + stride <= width {
            let shift = 128 - p.offset - stride;
            for (j, slot) in slots.iter_mut().enumerate() {
                *slot = scanner.block(p.lo | ((j as u128) << shift), shift, &mut cursor);
            }
        } else {
            // The last, partial level: the padding bits repeat the reachable slot's answer
            // (so they compress into its run); each real slot is one address.
            let pad = p.offset + stride - width;
            for (j, slot) in slots.iter_mut().enumerate() {
                let lo = p.lo | (((j as u128) >> pad) << (128 - width));
                *slot = (scanner.block(lo, 128 - width, &mut cursor).0, false);
            }
        }

        let mut previous: Option<u32> = None;
        let mut cursor = p.cursor;
        let shift = 128u32.saturating_sub(p.offset + stride);
        for (j, &(value, split)) in slots.iter().enumerate() {
            if j % 64 == 0 {
                // The cumulative counts: everything this node pushed so far.
                chunks.push(Chunk {
                    vector: 0,
                    leafvec: 0,
                    child_base: (pending.len() as u32).wrapping_sub(1),
                    leaf_base: (leaves.len() as u32).wrapping_sub(1),
                });
            }
            let chunk = chunks.last_mut().expect("pushed at slot 0");
            if split {
                let lo = p.lo | ((j as u128) << shift);
                scanner.seek(lo, &mut cursor);
                chunk.vector |= 1 << (j % 64);
                pending.push(Pending {
                    lo,
                    offset: p.offset + stride,
                    cursor,
                });
            } else if previous != Some(value) {
                chunk.leafvec |= 1 << (j % 64);
                leaves.push(value);
                previous = Some(value);
            }
        }
        if pending.len() >= LEAF_TAG as usize >> (stride - MIN_STRIDE) {
            return Err(limit(format!(
                "{} nodes of {stride} bits; chunk indices are 31 bits",
                pending.len()
            )));
        }
        if leaves.len() > u32::MAX as usize {
            return Err(limit(format!("{} leaves", leaves.len())));
        }
    }
    Ok(Built {
        direct,
        chunks,
        leaves,
        hops,
        levels,
    })
}
