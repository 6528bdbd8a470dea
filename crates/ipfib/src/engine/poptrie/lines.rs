//! A model of the cache lines a lookup reads (this machine has no hardware counters; see
//! `../shared/PERF-FACTS.md`). Each line a lookup loads counts once, hit or miss: the
//! direct-table entry, every node (a 24-byte node may straddle two lines, and then counts
//! two: the lines are taken from the arrays' real addresses), the leaf, and the next hop. The
//! batched walk's read of leaf 0 for lanes the direct table answered is not counted (one line
//! per batch, always cached).

use crate::engine::line_model::span;

use super::layout::{Family, Leaves, LEAF_TAG, STRIDE};
use super::Poptrie;

impl<A: Family> Poptrie<A> {
    /// The lines a lookup of `addr` reads (module docs), by the checked walk.
    pub(crate) fn lines_touched(&self, addr: A) -> usize {
        let top = addr.top(self.bits);
        let mut lines = span(&self.direct[top], 4);
        let d = self.direct[top];
        let index = if d & LEAF_TAG != 0 {
            d & !LEAF_TAG
        } else {
            let mut idx = d as usize;
            let mut offset = self.bits;
            loop {
                let n = &self.nodes[idx];
                lines += span(n, std::mem::size_of_val(n));
                let s = n.step(addr.chunk(offset));
                if !s.is_node {
                    let leaf = s.leaf as usize;
                    lines += match &self.leaves {
                        Leaves::Narrow(l) => span(&l[leaf], 2),
                        Leaves::Wide(l) => span(&l[leaf], 4),
                    };
                    break self.leaves.get(leaf).expect("validated");
                }
                idx = s.child as usize;
                offset += STRIDE;
            }
        };
        lines + span(&self.hops[index as usize], 4)
    }
}
