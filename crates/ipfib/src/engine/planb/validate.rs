//! The structural invariants PlanB's walk relies on, checked.
//!
//! The SIMD walks index the direct table, the inner nodes and the leaves without bounds
//! checks. That is sound exactly when:
//!
//! 1. the direct table has one entry per 16-bit chunk, and `1 <= depth <= MAX_DEPTH`;
//! 2. every direct entry names an inner node (or, for depth 1, a leaf);
//! 3. every inner node the walk can reach at step `l` has `link + k < len`, where `k` is its
//!    number of real (non-padding) keys, the largest rank a query can give, and `len` is the
//!    length of the array step `l + 1` reads (inner nodes, or leaves after the last inner step);
//! 4. every leaf position flagged as a fallback cell names an existing cell, and every cell is
//!    a non-empty range of the fallback arrays (so its search never indexes out of bounds or
//!    panics).
//!
//! The builder establishes all of them; [`check`] verifies them for a structure of unknown
//! origin (a saved table read from disk), visiting each (node, step) pair at most once.

use super::layout::{Decoded, Family, Key, DIRECT_BITS};
use super::PlanB;
use crate::error::InvalidStructure;

/// Deeper than any table whose node indices fit 32 bits needs.
const MAX_DEPTH: usize = 16;

fn invalid(reason: String) -> InvalidStructure {
    InvalidStructure {
        engine: "planb",
        reason,
    }
}

/// Checks every invariant the walk relies on (module docs).
pub fn check<A: Family>(t: &PlanB<A>) -> Result<(), InvalidStructure> {
    if t.direct.len() != 1 << DIRECT_BITS {
        return Err(invalid(format!(
            "direct table has {} entries, expected {}",
            t.direct.len(),
            1 << DIRECT_BITS
        )));
    }
    if !(1..=MAX_DEPTH).contains(&t.depth) {
        return Err(invalid(format!(
            "tree depth {} is outside 1..={MAX_DEPTH}",
            t.depth
        )));
    }
    // Nodes reached at the current step, as a set (a flag per node) and a list.
    let first_len = if t.depth == 1 {
        t.leaves.len()
    } else {
        t.inner.len()
    };
    let mut seen = vec![false; first_len];
    let mut frontier = Vec::new();
    for (chunk, &entry) in t.direct.iter().enumerate() {
        let Some(flag) = seen.get_mut(entry as usize) else {
            return Err(invalid(format!(
                "direct entry {chunk:#06x} names node {entry}, but there are {first_len}"
            )));
        };
        if !*flag {
            *flag = true;
            frontier.push(entry);
        }
    }
    for step in 1..t.depth {
        let next_len = if step + 1 == t.depth {
            t.leaves.len()
        } else {
            t.inner.len()
        };
        let mut next_seen = vec![false; next_len];
        let mut next = Vec::new();
        for &node in &frontier {
            let line = &t.inner[node as usize];
            let link = u64::from(A::Key::link(line));
            let keys = A::Key::keys_in(line, A::Key::INNER_KEYS) as u64;
            if link + keys >= next_len as u64 {
                return Err(invalid(format!(
                    "inner node {node} (step {step}) links to {link}..={}, but the next \
                     level has {next_len} nodes",
                    link + keys
                )));
            }
            for child in link..=link + keys {
                let flag = &mut next_seen[child as usize];
                if !*flag {
                    *flag = true;
                    next.push(child as u32);
                }
            }
        }
        frontier = next;
    }
    check_leaves(t)?;
    t.fallback.check().map_err(invalid)
}

/// Every fallback reference of every leaf position names an existing cell.
fn check_leaves<A: Family>(t: &PlanB<A>) -> Result<(), InvalidStructure> {
    let cells = t.fallback.cells();
    for (i, leaf) in t.leaves.iter().enumerate() {
        for r in 0..=A::Key::LEAF_KEYS as u32 {
            if let Decoded::Cell(c) = A::Key::decode(leaf, r) {
                if c as usize >= cells {
                    return Err(invalid(format!(
                        "leaf {i} position {r} names fallback cell {c}, but there are {cells}"
                    )));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Build, BuildOptions};
    use crate::prefix::Prefix;
    use crate::route_table::RouteTable;

    fn planb6() -> PlanB<u128> {
        // Enough boundaries in one chunk for two inner levels, and a /64 for a fallback cell.
        let mut t = RouteTable::<u128>::new();
        for i in 0..400u128 {
            t.insert(
                Prefix::new((0x2001_0db8 << 96) | (i << 80), 48).unwrap(),
                i as u32,
            );
        }
        t.insert(Prefix::new(0x2001_0db9 << 96 | 5 << 64, 64).unwrap(), 9);
        PlanB::build(&t, &BuildOptions::default()).unwrap()
    }

    #[test]
    fn built_structures_pass() {
        let p = planb6();
        assert!(p.depth >= 3, "the test wants inner levels");
        check(&p).unwrap();
        check(&PlanB::<u32>::build(&RouteTable::new(), &BuildOptions::default()).unwrap()).unwrap();
    }

    #[test]
    fn each_broken_invariant_is_named() {
        let mut p = planb6();
        p.direct[0x2001] = p.inner.len() as u32;
        assert!(check(&p)
            .unwrap_err()
            .reason
            .contains("direct entry 0x2001"));

        let mut p = planb6();
        let root = p.direct[0x2001] as usize;
        p.inner[root].0[15] = u32::MAX - 1;
        assert!(
            check(&p).unwrap_err().reason.contains("links to"),
            "link overflow"
        );

        let mut p = planb6();
        p.depth = 0;
        assert!(check(&p).is_err());

        let mut p = planb6();
        p.direct = vec![0; 5].into_boxed_slice();
        assert!(check(&p).is_err());

        let mut p = planb6();
        let bad = p
            .leaves
            .iter()
            .position(|l| (0..8).any(|r| matches!(<u32 as Key>::decode(l, r), Decoded::Cell(_))))
            .expect("a fallback leaf");
        let words = &mut p.leaves[bad].0;
        for w in &mut words[8..16] {
            *w = 1000;
        }
        assert!(check(&p).unwrap_err().reason.contains("fallback cell"));
    }
}
