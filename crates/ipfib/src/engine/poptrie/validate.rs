//! The invariants the walks rely on. The walks index with checks, so a broken structure
//! would panic rather than read out of bounds; these checks make it an error up front, and
//! also cover what bounds checks cannot see: a cycle (a walk that never ends) or a node deeper
//! than the address (a shift past its end).

use super::layout::{Family, Leaves, LEAF_TAG, STRIDE};
use super::Poptrie;
use crate::error::InvalidStructure;

fn bad(reason: String) -> InvalidStructure {
    InvalidStructure {
        engine: "poptrie",
        reason,
    }
}

/// Checks every invariant:
/// * the direct table has `2^s` entries, `1 <= s <= min(24, BITS)`; `hops` and `leaves` are
///   not empty;
/// * every answer (a direct leaf, a stored leaf) is an index into `hops`;
/// * every root and child index names a node, children come after their parent (so walks
///   end) and each node is reached exactly once, at an offset below the address width;
/// * a node's leaf-run marks sit on leaf slots only, the first leaf slot starts a run (so a
///   leaf's `popcnt` is at least 1), and its leaves are inside `leaves`.
pub fn check<A: Family>(t: &Poptrie<A>) -> Result<(), InvalidStructure> {
    let width = u32::from(A::BITS);
    if t.bits == 0 || t.bits > super::MAX_DIRECT_BITS.min(width) {
        return Err(bad(format!("direct table of {} bits", t.bits)));
    }
    if t.direct.len() != 1 << t.bits {
        return Err(bad(format!(
            "direct table has {} entries for {} bits",
            t.direct.len(),
            t.bits
        )));
    }
    if t.hops.is_empty() || t.leaves.len() == 0 {
        return Err(bad("empty next-hop or leaf array".into()));
    }
    let hops = t.hops.len() as u64;
    let leaf_ok = |i: usize| t.leaves.get(i).is_some_and(|h| u64::from(h) < hops);
    let bad_leaf = match &t.leaves {
        Leaves::Narrow(l) => l.iter().position(|&h| u64::from(h) >= hops),
        Leaves::Wide(l) => l.iter().position(|&h| u64::from(h) >= hops),
    };
    if let Some(i) = bad_leaf {
        return Err(bad(format!("leaf {i} names no next hop")));
    }

    // Offset each node is reached at (0 = not reached yet).
    let mut offset = vec![0u32; t.nodes.len()];
    let reach = |offset: &mut [u32],
                 node: u32,
                 at: u32,
                 from: Option<usize>|
     -> Result<(), InvalidStructure> {
        let slot = offset
            .get_mut(node as usize)
            .ok_or_else(|| bad(format!("node index {node} out of range")))?;
        if from.is_some_and(|p| node as usize <= p) {
            return Err(bad(format!("node {node} is not after its parent {from:?}")));
        }
        if *slot != 0 {
            return Err(bad(format!("node {node} is reached twice")));
        }
        if at >= width {
            return Err(bad(format!("node {node} at offset {at} past the address")));
        }
        *slot = at;
        Ok(())
    };
    for (j, &d) in t.direct.iter().enumerate() {
        if d & LEAF_TAG != 0 {
            if u64::from(d & !LEAF_TAG) >= hops {
                return Err(bad(format!("direct entry {j} names no next hop")));
            }
        } else {
            reach(&mut offset, d, t.bits, None)?;
        }
    }
    for (i, n) in t.nodes.iter().enumerate() {
        let at = offset[i];
        if at == 0 {
            return Err(bad(format!("node {i} is unreachable")));
        }
        if n.vector != 0 {
            let first = n.child_base.wrapping_add(1);
            for c in 0..n.children() {
                reach(&mut offset, first.wrapping_add(c), at + STRIDE, Some(i))?;
            }
        }
        if n.leafvec & n.vector != 0 {
            return Err(bad(format!("node {i} marks a leaf run on a node slot")));
        }
        if n.vector != u64::MAX {
            let first_leaf_slot = (!n.vector).trailing_zeros();
            if n.leafvec & (1 << first_leaf_slot) == 0 {
                return Err(bad(format!("node {i}: its first leaf slot starts no run")));
            }
            let first = n.leaf_base.wrapping_add(1) as usize;
            if !(first..first + n.leaves() as usize).all(leaf_ok) {
                return Err(bad(format!("node {i}: leaves out of bounds")));
            }
        }
    }
    Ok(())
}
