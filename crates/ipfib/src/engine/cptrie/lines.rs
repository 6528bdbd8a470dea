//! A model of the cache lines a lookup reads (this machine has no hardware counters; see
//! `../shared/PERF-FACTS.md`), counted as Poptrie's model counts them: the direct-table entry,
//! the one 24-byte chunk read per node (two lines where it straddles), the leaf and the next
//! hop, each line once, hit or miss, from the arrays' real addresses.

use crate::engine::line_model::span;

use super::layout::{Family, Leaves, LEAF_TAG};
use super::CpTrie;

impl<A: Family> CpTrie<A> {
    /// The lines a lookup of `addr` reads (module docs), by a checked walk.
    pub(crate) fn lines_touched(&self, addr: A) -> usize {
        let top = addr.top(self.bits);
        let mut lines = span(&self.direct[top], 4);
        let d = self.direct[top];
        let index = if d & LEAF_TAG != 0 {
            d & !LEAF_TAG
        } else {
            let mut node = d as usize;
            let mut offset = self.bits;
            loop {
                let slot = addr.chunk(offset, self.stride);
                let chunk = &self.chunks[(node << (self.stride - 6)) | (slot >> 6) as usize];
                lines += span(chunk, std::mem::size_of_val(chunk));
                let s = chunk.step(slot & 63);
                if !s.is_node {
                    let leaf = s.leaf as usize;
                    lines += match &self.leaves {
                        Leaves::Narrow(l) => span(&l[leaf], 2),
                        Leaves::Wide(l) => span(&l[leaf], 4),
                    };
                    break self.leaves.get(leaf).expect("validated");
                }
                node = s.child as usize;
                offset += self.stride;
            }
        };
        lines + span(&self.hops[index as usize], 4)
    }
}
