//! The structural invariants PlanB's walk relies on, checked.
//!
//! The SIMD walks index the direct table, the chunk list, the segments and their lines
//! without bounds checks. That is sound exactly when:
//!
//! 1. the direct table has one entry per 16-bit chunk, the chunk list and the segment list
//!    are not empty (a class-0 lookup reads chunk 0, branch-free);
//! 2. every direct entry of class `d > 0` names a chunk whose tree has depth `d`;
//! 3. every chunk names an existing segment, has a depth in `1..=MAX_CLASS`, and its root is a
//!    line of that segment;
//! 4. every line the walk can reach with `k > 1` searches to go has `link + keys < len`, where
//!    `keys` is its number of real (non-padding) keys, the largest rank a query can give, and
//!    `len` is the number of lines of its segment;
//! 5. every position of a line reached as a leaf (one search to go) that is flagged as a
//!    fallback cell names a cell of the segment, and every cell is a non-empty range of the
//!    segment's fallback arrays (so its search never indexes out of bounds or panics).
//!
//! The builder establishes all of them; [`check`] verifies them for a structure of unknown
//! origin (a saved table read from disk), visiting each (line, searches to go) pair at most
//! once, so a hostile structure whose chunks share lines costs no more than an honest one.

use super::layout::{split_entry, Decoded, Family, Key, DIRECT_BITS, MAX_CLASS};
use super::PlanB;
use crate::error::InvalidStructure;

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
    if t.chunks.is_empty() || t.segments.is_empty() {
        return Err(invalid("no chunk tree or no segment".into()));
    }
    for (chunk, &entry) in t.direct.iter().enumerate() {
        let (class, payload) = split_entry(entry);
        if class == 0 {
            continue;
        }
        match t.chunks.get(payload as usize) {
            Some(c) if c.depth as usize == class => {}
            Some(c) => {
                return Err(invalid(format!(
                    "direct entry {chunk:#06x} has class {class}, but its tree {payload} has \
                     depth {}",
                    c.depth
                )))
            }
            None => {
                return Err(invalid(format!(
                    "direct entry {chunk:#06x} names tree {payload}, but there are {}",
                    t.chunks.len()
                )))
            }
        }
    }
    // Per segment and line: a bit for each number of searches to go it was reached with.
    let mut seen: Vec<Vec<u8>> = t.segments.iter().map(|s| vec![0; s.lines.len()]).collect();
    for (i, c) in t.chunks.iter().enumerate() {
        let Some(segment) = t.segments.get(c.segment as usize) else {
            return Err(invalid(format!(
                "tree {i} is in segment {}, but there are {}",
                c.segment,
                t.segments.len()
            )));
        };
        if !(1..=MAX_CLASS).contains(&(c.depth as usize)) {
            return Err(invalid(format!(
                "tree {i} has depth {}, outside 1..={MAX_CLASS}",
                c.depth
            )));
        }
        let seen = &mut seen[c.segment as usize];
        let len = segment.lines.len();
        if c.root as usize >= len {
            return Err(invalid(format!(
                "tree {i} has root {} in segment {} of {len} lines",
                c.root, c.segment
            )));
        }
        // Lines reached with `to_go` searches left, as a list (`seen` is the set).
        let mut frontier = vec![c.root];
        for to_go in (2..=c.depth).rev() {
            let mut next = Vec::new();
            for &node in &frontier {
                let bit = 1u8 << (to_go - 1);
                if seen[node as usize] & bit != 0 {
                    continue;
                }
                seen[node as usize] |= bit;
                let line = &segment.lines[node as usize];
                let link = u64::from(A::Key::link(line));
                let keys = A::Key::keys_in(line, A::Key::INNER_KEYS) as u64;
                if link + keys >= len as u64 {
                    return Err(invalid(format!(
                        "line {node} of segment {} ({to_go} searches to go) links to \
                         {link}..={}, but the segment has {len} lines",
                        c.segment,
                        link + keys
                    )));
                }
                next.extend((link..=link + keys).map(|n| n as u32));
            }
            frontier = next;
        }
        let cells = segment.fallback.cells();
        for &leaf in &frontier {
            if seen[leaf as usize] & 1 != 0 {
                continue;
            }
            seen[leaf as usize] |= 1;
            let line = &segment.lines[leaf as usize];
            for r in 0..=A::Key::LEAF_KEYS as u32 {
                if let Decoded::Cell(cell) = A::Key::decode(line, r) {
                    if cell as usize >= cells {
                        return Err(invalid(format!(
                            "leaf {leaf} of segment {} position {r} names fallback cell \
                             {cell}, but there are {cells}",
                            c.segment
                        )));
                    }
                }
            }
        }
    }
    for segment in &t.segments {
        segment.fallback.check().map_err(invalid)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::layout::{Line32, Segment, CLASS_SHIFT};
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

    /// Line index of `p`'s 2001:db8::/32 tree root, with its segment.
    fn root(p: &PlanB<u128>) -> (usize, usize) {
        let (_, tree) = split_entry(p.direct[0x2001]);
        let c = p.chunks[tree as usize];
        (c.segment as usize, c.root as usize)
    }

    /// A copy of `p` whose segment `seg` is edited by `f`.
    fn with_lines(p: &PlanB<u128>, seg: usize, f: impl FnOnce(&mut Vec<Line32>)) -> PlanB<u128> {
        let mut p = p.clone();
        let mut lines = p.segments[seg].lines.to_vec();
        f(&mut lines);
        let fallback = p.segments[seg].fallback.clone();
        p.segments[seg] = std::sync::Arc::new(Segment {
            lines: lines.into_boxed_slice(),
            fallback,
        });
        p
    }

    #[test]
    fn each_broken_invariant_is_named() {
        let good = planb6();
        let reason = |p: &PlanB<u128>| check(p).unwrap_err().reason;

        let mut p = good.clone();
        p.direct[0x2001] = (3 << CLASS_SHIFT) | p.chunks.len() as u32;
        assert!(reason(&p).contains("direct entry 0x2001 names tree"));

        let mut p = good.clone();
        let (_, tree) = split_entry(p.direct[0x2001]);
        p.direct[0x2001] = (1 << CLASS_SHIFT) | tree;
        assert!(reason(&p).contains("has class 1"), "class and depth disagree");

        let (seg, top) = root(&good);
        let p = with_lines(&good, seg, |l| l[top].0[15] = u32::MAX - 1);
        assert!(reason(&p).contains("links to"), "link overflow");

        let mut p = good.clone();
        p.chunks[0].segment = 9;
        assert!(reason(&p).contains("segment 9"));

        let mut p = good.clone();
        p.chunks[0].root = u32::MAX;
        assert!(reason(&p).contains("has root"));

        let mut p = good.clone();
        p.chunks[0].depth = 0;
        assert!(reason(&p).contains("depth 0"));

        let mut p = good.clone();
        p.direct = vec![0; 5].into_boxed_slice();
        assert!(check(&p).is_err());

        let mut p = good.clone();
        p.chunks = Box::new([]);
        assert!(check(&p).is_err(), "chunk 0 must exist");

        // The leaf holding the /64's fallback cell: walk to it with plain counts.
        let (seg, mut node) = root(&good);
        let x = 0x0db9_0000u32;
        let lines = &good.segments[seg].lines;
        for _ in 1..good.depth {
            let l = &lines[node];
            node = l.0[15] as usize + l.0[..15].iter().filter(|&&k| k < x).count();
        }
        assert!(
            (0..8).any(|r| matches!(<u32 as Key>::decode(&lines[node], r), Decoded::Cell(_))),
            "the leaf has a fallback cell"
        );
        let p = with_lines(&good, seg, |lines| {
            for w in &mut lines[node].0[8..16] {
                *w = 1000;
            }
        });
        assert!(reason(&p).contains("fallback cell"));
    }

    #[test]
    fn shared_lines_are_visited_once() {
        // Every chunk names the same deep tree: checking stays linear in lines, not chunks.
        let mut p = planb6();
        let entry = p.direct[0x2001];
        p.direct.fill(entry);
        check(&p).unwrap();
    }
}
