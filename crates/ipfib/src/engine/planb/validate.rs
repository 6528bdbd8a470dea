//! The structural invariants PlanB's walk relies on, checked.
//!
//! The SIMD walks index the direct table, the segment table, the segments and their lines
//! without bounds checks. That is sound exactly when:
//!
//! 1. the direct table has one entry per 16-bit chunk, there is at least one segment, and
//!    `1 <= depth <= MAX_DEPTH`;
//! 2. with several segments, the segment table has one entry per chunk, each naming a segment
//!    (with one segment it may be empty: the walk does not read it);
//! 3. every chunk's direct entry is a line of its segment; an entry marked
//!    [`LEAF_ENTRY`] (its line is the chunk's leaf) occurs only in a table of depth 2;
//! 4. every line the walk can reach with `k > 1` searches to go has `link + keys < len`,
//!    where `keys` is its number of real (non-padding) keys, the largest rank a query can
//!    give, and `len` is the number of lines of its segment;
//! 5. every position of a line reached as a leaf (one search to go) that is flagged as a
//!    fallback cell names a cell of the segment, and every cell is a non-empty range of the
//!    segment's fallback arrays (so its search never indexes out of bounds or panics);
//! 6. the count of chunks per segment matches the segment table (partial rebuilds drop the
//!    segments whose count reaches zero, so a wrong count would drop one still walked).
//!
//! The builder establishes all of them; [`check`] verifies them for a structure of unknown
//! origin (a saved table read from disk), visiting each (line, searches to go) pair at most
//! once, so a hostile structure whose chunks share lines costs no more than an honest one.

use super::layout::{entry_line, Decoded, Family, Key, DIRECT_BITS, LEAF_ENTRY};
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
    let chunks = 1usize << DIRECT_BITS;
    if t.direct.len() != chunks {
        return Err(invalid(format!(
            "direct table has {} entries, expected {chunks}",
            t.direct.len()
        )));
    }
    if t.segments.is_empty() || !t.home.ptr_eq(&t.segments[0].lines) {
        return Err(invalid(
            "no segment, or the home lines are not segment 0's".into(),
        ));
    }
    if !(1..=MAX_DEPTH).contains(&t.depth) {
        return Err(invalid(format!(
            "tree depth {} is outside 1..={MAX_DEPTH}",
            t.depth
        )));
    }
    if t.segments.len() > 1 && t.segment_of.len() != chunks {
        return Err(invalid(format!(
            "{} segments but a segment table of {} entries, expected {chunks}",
            t.segments.len(),
            t.segment_of.len()
        )));
    }
    // Per segment and line: a bit for each number of searches to go it was reached with.
    let mut seen: Vec<Vec<u16>> = t.segments.iter().map(|s| vec![0; s.lines.len()]).collect();
    // Lines reached with `to_go` searches left, as a list (`seen` is the set); both lists are
    // reused across chunks (opening a saved table runs this, and allocations were a tenth of
    // its time).
    let (mut frontier, mut next) = (Vec::new(), Vec::new());
    for (chunk, &entry) in t.direct.iter().enumerate() {
        let seg = t.segment_of.get(chunk).map_or(0, |&s| usize::from(s));
        let Some(segment) = t.segments.get(seg) else {
            return Err(invalid(format!(
                "chunk {chunk:#06x} is in segment {seg}, but there are {}",
                t.segments.len()
            )));
        };
        let seen = &mut seen[seg];
        let len = segment.lines.len();
        let at_leaf = entry & LEAF_ENTRY != 0;
        if at_leaf && t.depth != 2 {
            return Err(invalid(format!(
                "direct entry {chunk:#06x} is marked as a leaf in a table of depth {}",
                t.depth
            )));
        }
        let entry = entry_line(entry);
        if entry as usize >= len {
            return Err(invalid(format!(
                "direct entry {chunk:#06x} names line {entry}, but segment {seg} has {len}"
            )));
        }
        frontier.clear();
        frontier.push(entry);
        let inner_levels = if at_leaf { 1 } else { t.depth };
        for to_go in (2..=inner_levels).rev() {
            next.clear();
            for &node in &frontier {
                let bit = 1u16 << (to_go - 1);
                if seen[node as usize] & bit != 0 {
                    continue;
                }
                seen[node as usize] |= bit;
                let line = &segment.lines[node as usize];
                let link = u64::from(A::Key::link(line));
                let keys = A::Key::keys_in(line, A::Key::INNER_KEYS) as u64;
                if link + keys >= len as u64 {
                    return Err(invalid(format!(
                        "line {node} of segment {seg} ({to_go} searches to go) links to \
                         {link}..={}, but the segment has {len} lines",
                        link + keys
                    )));
                }
                next.extend((link..=link + keys).map(|n| n as u32));
            }
            std::mem::swap(&mut frontier, &mut next);
        }
        let cells = segment.fallback.cells();
        for &leaf in &frontier {
            if seen[leaf as usize] & 1 != 0 {
                continue;
            }
            seen[leaf as usize] |= 1;
            let line = &segment.lines[leaf as usize];
            for r in 0..=A::Key::leaf_keys(t.narrow) as u32 {
                if let Decoded::Cell(cell) = A::Key::decode_in(line, r, t.narrow) {
                    if cell as usize >= cells {
                        return Err(invalid(format!(
                            "leaf {leaf} of segment {seg} position {r} names fallback cell \
                             {cell}, but there are {cells}"
                        )));
                    }
                }
            }
        }
    }
    for segment in &t.segments {
        segment.fallback.check().map_err(invalid)?;
    }
    // The per-segment chunk counts decide which segments a partial rebuild may drop: a wrong
    // count would drop a segment some chunk still walks.
    if t.users != super::count_users(&t.segment_of, t.segments.len()) {
        return Err(invalid(
            "the chunk counts per segment do not match the segment table".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::layout::{Line32, Segment};
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
        // A next hop past 16 bits: wide leaves, whose layout the tests below edit.
        t.insert(Prefix::new(0x3000 << 112, 16).unwrap(), 1 << 20);
        let p = PlanB::build(&t, &BuildOptions::default()).unwrap();
        assert!(!p.narrow);
        p
    }

    #[test]
    fn built_structures_pass() {
        let p = planb6();
        assert!(p.depth >= 3, "the test wants inner levels");
        check(&p).unwrap();
        check(&PlanB::<u32>::build(&RouteTable::new(), &BuildOptions::default()).unwrap()).unwrap();
    }

    /// A copy of `p` whose segment `seg` is edited by `f`.
    fn with_lines(p: &PlanB<u128>, seg: usize, f: impl FnOnce(&mut Vec<Line32>)) -> PlanB<u128> {
        let mut p = p.clone();
        let mut lines = p.segments[seg].lines.to_vec();
        f(&mut lines);
        let fallback = p.segments[seg].fallback.clone();
        p.segments[seg] = std::sync::Arc::new(Segment {
            lines: lines.into(),
            fallback,
        });
        p.home = p.segments[0].lines.clone();
        p
    }

    #[test]
    fn each_broken_invariant_is_named() {
        let good = planb6();
        let reason = |p: &PlanB<u128>| check(p).unwrap_err().reason;

        let mut p = good.clone();
        let mut direct = p.direct.to_vec();
        direct[0x2001] = p.segments[0].lines.len() as u32;
        p.direct = direct.into();
        assert!(reason(&p).contains("direct entry 0x2001"));

        let mut p = good.clone();
        let mut direct = p.direct.to_vec();
        direct[0x2001] |= LEAF_ENTRY;
        p.direct = direct.into();
        assert!(
            reason(&p).contains("marked as a leaf"),
            "leaf entry at depth 3+"
        );

        let top = good.direct[0x2001] as usize;
        let p = with_lines(&good, 0, |l| l[top].0[15] = u32::MAX - 1);
        assert!(reason(&p).contains("links to"), "link overflow");

        let mut p = good.clone();
        p.home = p.home.to_vec().into();
        assert!(reason(&p).contains("home lines"));

        let mut p = good.clone();
        p.depth = 0;
        assert!(check(&p).is_err());

        let mut p = good.clone();
        p.direct = vec![0; 5].into();
        assert!(check(&p).is_err());

        let mut p = good.clone();
        p.segments.push(p.segments[0].clone());
        assert!(
            reason(&p).contains("segment table"),
            "two segments need the table"
        );
        p.segment_of = vec![0; 1 << DIRECT_BITS].into_boxed_slice();
        assert!(reason(&p).contains("chunk counts"), "counts not updated");
        p.users = vec![1 << DIRECT_BITS, 0];
        check(&p).unwrap();
        p.segment_of[0x2001] = 2;
        assert!(reason(&p).contains("segment 2"));

        // The leaf holding the /64's fallback cell: walk to it with plain counts.
        let mut node = good.direct[0x2001] as usize;
        let x = 0x0db9_0000u32;
        let lines = &good.segments[0].lines;
        for _ in 1..good.depth {
            let l = &lines[node];
            node = l.0[15] as usize + l.0[..15].iter().filter(|&&k| k < x).count();
        }
        assert!(
            (0..8).any(|r| matches!(
                <u32 as Key>::decode::<false>(&lines[node], r),
                Decoded::Cell(_)
            )),
            "the leaf has a fallback cell"
        );
        let p = with_lines(&good, 0, |lines| {
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
        p.direct = vec![entry; p.direct.len()].into();
        check(&p).unwrap();
    }
}
