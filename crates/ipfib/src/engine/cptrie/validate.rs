//! The invariants the walks rely on, checked up front: every index in bounds, children after
//! their parent (walks end), each node reached once at an offset inside the address, and a
//! node's first leaf slot starting a run (so a leaf's count is at least 1).

use super::layout::{Family, LEAF_TAG, MAX_STRIDE, MIN_STRIDE};
use super::CpTrie;
use crate::error::InvalidStructure;

fn bad(reason: String) -> InvalidStructure {
    InvalidStructure {
        engine: "cptrie",
        reason,
    }
}

/// Checks every invariant (module docs).
pub fn check<A: Family>(t: &CpTrie<A>) -> Result<(), InvalidStructure> {
    let width = u32::from(A::BITS);
    if t.bits == 0 || t.bits > super::MAX_DIRECT_BITS.min(width) {
        return Err(bad(format!("direct table of {} bits", t.bits)));
    }
    if !(MIN_STRIDE..=MAX_STRIDE).contains(&t.stride) {
        return Err(bad(format!("stride {}", t.stride)));
    }
    if t.direct.len() != 1 << t.bits {
        return Err(bad(format!("direct table of {} entries", t.direct.len())));
    }
    if t.hops.is_empty() || t.leaves.len() == 0 {
        return Err(bad("empty next-hop or leaf array".into()));
    }
    let per_node = 1usize << (t.stride - MIN_STRIDE);
    if !t.chunks.len().is_multiple_of(per_node) {
        return Err(bad(format!(
            "{} chunks for nodes of {per_node}",
            t.chunks.len()
        )));
    }
    let nodes = t.chunks.len() / per_node;
    let hops = t.hops.len() as u64;
    for i in 0..t.leaves.len() {
        if t.leaves.get(i).is_none_or(|h| u64::from(h) >= hops) {
            return Err(bad(format!("leaf {i} names no next hop")));
        }
    }
    // Offset each node is reached at (0 = not reached yet; the direct table is >= 1 bit).
    let mut offset = vec![0u32; nodes];
    for (j, &d) in t.direct.iter().enumerate() {
        if d & LEAF_TAG != 0 {
            if u64::from(d & !LEAF_TAG) >= hops {
                return Err(bad(format!("direct entry {j} names no next hop")));
            }
        } else {
            reach(&mut offset, d, t.bits, width, None)?;
        }
    }
    // Children come after their parent, so a pass in node order sees each parent first.
    for (n, node) in t.chunks.chunks(per_node).enumerate() {
        let at = offset[n];
        if at == 0 {
            return Err(bad(format!("node {n} is unreachable")));
        }
        let first_leaf_slot = node
            .iter()
            .enumerate()
            .find(|(_, c)| c.vector != u64::MAX)
            .map(|(i, c)| (i, (!c.vector).trailing_zeros()));
        if let Some((i, w)) = first_leaf_slot {
            if node[i].leafvec & (1 << w) == 0 {
                return Err(bad(format!("node {n}: its first leaf slot starts no run")));
            }
        }
        let (mut children, mut leaves) = (0u32, 0u32);
        let first_child = node[0].child_base.wrapping_add(1);
        let first_leaf = node[0].leaf_base.wrapping_add(1);
        for (i, c) in node.iter().enumerate() {
            if c.leafvec & c.vector != 0 {
                return Err(bad(format!("node {n}: a leaf run on a node slot")));
            }
            if c.child_base.wrapping_add(1) != first_child.wrapping_add(children)
                || c.leaf_base.wrapping_add(1) != first_leaf.wrapping_add(leaves)
            {
                return Err(bad(format!(
                    "node {n}: chunk {i}'s counts are not cumulative"
                )));
            }
            children += c.vector.count_ones();
            leaves += c.leafvec.count_ones();
        }
        for k in 0..children {
            reach(
                &mut offset,
                first_child.wrapping_add(k),
                at + t.stride,
                width,
                Some(n),
            )?;
        }
        let end = first_leaf as usize + leaves as usize;
        if leaves > 0 && end > t.leaves.len() {
            return Err(bad(format!("node {n}: leaves out of bounds")));
        }
    }
    Ok(())
}

/// Marks `node` reached at offset `at` from parent `from`.
fn reach(
    offset: &mut [u32],
    node: u32,
    at: u32,
    width: u32,
    from: Option<usize>,
) -> Result<(), InvalidStructure> {
    let slot = offset
        .get_mut(node as usize)
        .ok_or_else(|| bad(format!("node {node} out of range")))?;
    if from.is_some_and(|p| node as usize <= p) {
        return Err(bad(format!("node {node} is not after its parent")));
    }
    if *slot != 0 || at >= width {
        return Err(bad(format!("node {node} reached twice or at offset {at}")));
    }
    *slot = at;
    Ok(())
}
