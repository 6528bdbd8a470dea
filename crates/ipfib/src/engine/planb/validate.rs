//! The structural invariants PlanB's walk relies on, checked.
//!
//! The SIMD walks index the direct table, the inner nodes and the leaves without bounds
//! checks, and the batched walk pipelines each class of chunks with its depth as a constant.
//! That is sound exactly when:
//!
//! 1. the direct table has one entry per 16-bit chunk;
//! 2. `depth` is the largest class of any entry (the walk relies on nothing deeper existing
//!    only for reporting, but a mismatch means the structure was not built as described);
//! 3. every entry of class `c >= 1` names a node that exists in the array its first search
//!    reads: a leaf for class 1, an inner node otherwise (class 0 entries hold an answer and
//!    name nothing);
//! 4. every inner node the walk can reach with `r >= 1` inner steps still to take has
//!    `link + k < len`, where `k` is its number of real (non-padding) keys, the largest rank a
//!    query can give, and `len` is the length of the array the next search reads (inner nodes
//!    when `r > 1`, leaves when `r == 1`);
//! 5. every leaf position flagged as a fallback cell names an existing cell, and every cell is
//!    a non-empty range of the fallback arrays (so its search never indexes out of bounds or
//!    panics).
//!
//! The builder establishes all of them; [`check`] verifies them for a structure of unknown
//! origin (a saved table read from disk), visiting each (node, steps to go) pair at most once.

use super::layout::{class_of, Decoded, Family, Key, DIRECT_BITS, MAX_CLASS, PAYLOAD};
use super::PlanB;
use crate::error::InvalidStructure;

fn invalid(reason: String) -> InvalidStructure {
    InvalidStructure {
        engine: "planb",
        reason,
    }
}

/// Nodes reached with a given number of inner steps still to take, as a set (a flag per node
/// of the array they are in) and a list.
struct Frontier {
    seen: Vec<bool>,
    nodes: Vec<u32>,
}

impl Frontier {
    fn new(len: usize) -> Self {
        Frontier {
            seen: vec![false; len],
            nodes: Vec::new(),
        }
    }

    /// Adds `node`; false when it is not below the array's length.
    fn add(&mut self, node: u32) -> bool {
        match self.seen.get_mut(node as usize) {
            Some(flag) => {
                if !*flag {
                    *flag = true;
                    self.nodes.push(node);
                }
                true
            }
            None => false,
        }
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
    let deepest = t.direct.iter().map(|&e| class_of(e)).max().unwrap_or(0);
    if t.depth != deepest {
        return Err(invalid(format!(
            "depth is {}, but the deepest chunk has class {deepest}",
            t.depth
        )));
    }
    // `to_go[r]`: nodes reached with `r` inner steps still to take (leaves for r = 0).
    let array_len = |r: usize| {
        if r == 0 {
            t.leaves.len()
        } else {
            t.inner.len()
        }
    };
    let mut to_go: Vec<Frontier> = (0..MAX_CLASS)
        .map(|r| Frontier::new(array_len(r)))
        .collect();
    for (chunk, &e) in t.direct.iter().enumerate() {
        let class = class_of(e);
        if class == 0 {
            continue;
        }
        let node = e & PAYLOAD;
        if !to_go[class - 1].add(node) {
            return Err(invalid(format!(
                "direct entry {chunk:#06x} (class {class}) names node {node}, but there are {}",
                array_len(class - 1)
            )));
        }
    }
    for r in (1..MAX_CLASS).rev() {
        let (below, here) = to_go.split_at_mut(r);
        let next = &mut below[r - 1];
        let next_len = array_len(r - 1) as u64;
        for &node in &here[0].nodes {
            let line = &t.inner[node as usize];
            let link = u64::from(A::Key::link(line));
            let keys = A::Key::keys_in(line, A::Key::INNER_KEYS) as u64;
            if link + keys >= next_len {
                return Err(invalid(format!(
                    "inner node {node} ({r} steps to go) links to {link}..={}, but the next \
                     level has {next_len} nodes",
                    link + keys
                )));
            }
            for child in link..=link + keys {
                next.add(child as u32);
            }
        }
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
    use super::super::layout::entry;
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
        t.insert(Prefix::new(0x2002_0db8 << 96, 32).unwrap(), 9);
        PlanB::build(&t, &BuildOptions::default()).unwrap()
    }

    #[test]
    fn built_structures_pass() {
        let p = planb6();
        assert!(p.depth >= 3, "the test wants inner levels");
        assert_eq!(
            class_of(p.direct[0x2002]),
            1,
            "and a chunk with a single leaf"
        );
        check(&p).unwrap();
        check(&PlanB::<u32>::build(&RouteTable::new(), &BuildOptions::default()).unwrap()).unwrap();
    }

    #[test]
    fn each_broken_invariant_is_named() {
        let reason = |p: &PlanB<u128>| check(p).unwrap_err().reason;

        // 1. The direct table's size.
        let mut p = planb6();
        p.direct = vec![0; 5].into_boxed_slice();
        assert!(reason(&p).contains("direct table has 5 entries"));

        // 2. The recorded depth.
        let mut p = planb6();
        p.depth += 1;
        assert!(reason(&p).contains("deepest chunk"));

        // 3. An entry naming a missing inner node, or a missing leaf (class 1).
        let mut p = planb6();
        let class = class_of(p.direct[0x2001]);
        p.direct[0x2001] = entry(class, p.inner.len() as u32);
        assert!(reason(&p).contains("direct entry 0x2001"));
        let mut p = planb6();
        p.direct[0x2002] = entry(1, p.leaves.len() as u32);
        assert!(reason(&p).contains("direct entry 0x2002 (class 1)"));

        // 3. A class raised above the chunk's tree: its root would be searched as an inner
        // node one level too high, and its leaves' indices read as inner nodes.
        let mut p = planb6();
        let e = p.direct[0x2001];
        p.direct[0x2001] = entry(class_of(e) + 2, e & PAYLOAD);
        p.depth = class_of(e) + 2;
        assert!(check(&p).is_err(), "a deeper class than the tree's");

        // 4. A link past the next level, at the root and at the last inner level.
        let mut p = planb6();
        let root = (p.direct[0x2001] & PAYLOAD) as usize;
        p.inner[root].0[15] = u32::MAX - 1;
        assert!(reason(&p).contains("links to"), "link overflow");
        let mut p = planb6();
        let last = p.inner.len() - 1;
        p.inner[last].0[15] = p.leaves.len() as u32 - 1;
        assert!(reason(&p).contains("1 steps to go"), "last inner level");

        // 5. A fallback reference past the cells.
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
        assert!(reason(&p).contains("fallback cell"));
    }

    #[test]
    fn class_zero_entries_name_nothing() {
        // Any payload is fine for an entry that answers by itself, even past every array.
        let mut p = planb6();
        p.direct[0x2002] = entry(0, PAYLOAD);
        check(&p).unwrap();
    }
}
