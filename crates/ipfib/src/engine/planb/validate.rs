//! The structural invariants PlanB's walk relies on, checked.
//!
//! The SIMD walks index the direct table, the segment table, the segments and their lines
//! without bounds checks. That is sound exactly when:
//!
//! 1. the direct table has one entry per 16-bit chunk, there is at least one segment, and
//!    `1 <= depth <= MAX_DEPTH`;
//! 2. with several segments, the segment table has one entry per chunk, each naming a segment
//!    (with one segment it may be empty: the walk does not read it; a live table's home with
//!    appended chunks keeps it, `partial`);
//! 3. every chunk's direct entry is a line of its segment; an entry marked
//!    [`LEAF_ENTRY`] (its line is the chunk's leaf) occurs only in a table of depth 2;
//! 4. every line the walk can reach with `k > 1` searches to go has `link + keys < len`,
//!    where `keys` is its number of real (non-padding) keys, the largest rank a query can
//!    give, and `len` is the number of lines of its segment;
//! 5. every position of a line reached as a leaf (one search to go) that is flagged as a
//!    fallback cell names a cell of the segment, and every cell is a non-empty range of the
//!    segment's fallback arrays (so its search never indexes out of bounds or panics);
//! 6. the count of chunks per segment matches the segment table (partial rebuilds drop the
//!    segments whose count reaches zero, so a wrong count would drop one still walked);
//! 7. every chunk's tree is the search tree of its ranges the builder lays out: each level's
//!    nodes are contiguous and so are their children, in order (so the leaves a walk reaches
//!    are exactly the run `PlanB::ranges` reads); the keys of the run of leaves ascend
//!    strictly, each leaf's in its first slots and padding after them; every leaf but the
//!    first holds a key; and an inner node's keys are the smallest keys under its children
//!    but the first. Trees of chunks with different entries share no line.
//!
//! The walk needs 1 to 6 to stay in bounds. 7 is what makes a table mean one thing: the walk
//! and everything that reads a chunk's ranges instead (the staged tables, partial rebuilds)
//! then give the same answers, and the staged build's arithmetic on ascending starts cannot
//! underflow (a saved table with unordered keys made it panic under the fuzzer).
//!
//! The builder establishes all of them; [`check`] verifies them for a structure of unknown
//! origin (a saved table read from disk), visiting each (line, searches to go) pair at most
//! once and each tree once, so a hostile structure whose chunks share lines costs no more
//! than an honest one.

use super::layout::{entry_line, Decoded, Family, Key, DIRECT_BITS, LEAF_ENTRY};
use super::tree::Tree;
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
pub fn check<A: Family>(t: &Tree<A>) -> Result<(), InvalidStructure> {
    let chunks = 1usize << DIRECT_BITS;
    let segments = t.segments();
    let (depth, narrow) = (t.depth(), t.narrow());
    // One segment: the flat direct table and no pages; several: pages (`Pages` has a page
    // for every chunk by construction) and no flat table.
    let paged = !t.pages().is_empty();
    if paged && !t.flat_direct().is_empty() || !paged && t.flat_direct().len() != chunks {
        return Err(invalid(format!(
            "direct table has {} entries and {} pages, expected {chunks} entries or pages",
            t.flat_direct().len(),
            t.pages().pages().len()
        )));
    }
    if segments.is_empty()
        || !t.home().ptr_eq(&segments[0].lines)
        || t.all_lines().len() != segments.len()
        || !t
            .all_lines()
            .iter()
            .zip(segments)
            .all(|(l, s)| l.ptr_eq(&s.lines))
    {
        return Err(invalid(
            "no segment, or the walk's lines are not the segments' lines".into(),
        ));
    }
    if !(1..=MAX_DEPTH).contains(&depth) {
        return Err(invalid(format!(
            "tree depth {depth} is outside 1..={MAX_DEPTH}"
        )));
    }
    if segments.len() > 1 && !paged {
        return Err(invalid(format!(
            "{} segments but no segment table",
            segments.len()
        )));
    }
    // Per segment and line: a bit for each number of searches to go it was reached with.
    let mut seen: Vec<Vec<u16>> = segments.iter().map(|s| vec![0; s.lines.len()]).collect();
    // Lines reached with `to_go` searches left, as a list (`seen` is the set); both lists are
    // reused across chunks (opening a saved table runs this, and allocations were a tenth of
    // its time).
    let (mut frontier, mut next) = (Vec::new(), Vec::new());
    // Per segment and line: whether a chunk's tree holds it, and whether it is an entry whose
    // tree was checked (invariant 7).
    let mut claimed: Vec<Vec<bool>> = segments
        .iter()
        .map(|s| vec![false; s.lines.len()])
        .collect();
    let mut trees_checked = claimed.clone();
    // The previous chunk's segment and entry: a chunk that repeats them (runs of chunks that
    // share a tree, such as every chunk no route reaches) finds all its work done.
    let mut previous = None;
    for (chunk, (seg, entry)) in t.chunks().enumerate() {
        if previous.replace((seg, entry)) == Some((seg, entry)) {
            continue;
        }
        let Some(segment) = segments.get(seg) else {
            return Err(invalid(format!(
                "chunk {chunk:#06x} is in segment {seg}, but there are {}",
                segments.len()
            )));
        };
        let seen = &mut seen[seg];
        let len = segment.lines.len();
        let at_leaf = entry & LEAF_ENTRY != 0;
        if at_leaf && depth != 2 {
            return Err(invalid(format!(
                "direct entry {chunk:#06x} is marked as a leaf in a table of depth {depth}"
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
        let inner_levels = if at_leaf { 1 } else { depth };
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
            for r in 0..=A::Key::leaf_keys(narrow) as u32 {
                if let Decoded::Cell(cell) = A::Key::decode_in(line, r, narrow) {
                    if cell as usize >= cells {
                        return Err(invalid(format!(
                            "leaf {leaf} of segment {seg} position {r} names fallback cell \
                             {cell}, but there are {cells}"
                        )));
                    }
                }
            }
        }
        if !std::mem::replace(&mut trees_checked[seg][entry as usize], true) {
            check_search_tree::<A::Key>(
                &segment.lines,
                entry as usize,
                inner_levels,
                A::Key::leaf_keys(narrow),
                &mut claimed[seg],
            )
            .map_err(|e| invalid(format!("chunk {chunk:#06x} (segment {seg}): {e}")))?;
        }
    }
    for segment in segments {
        segment.fallback.check().map_err(invalid)?;
    }
    // The per-segment chunk counts decide which segments a partial rebuild may drop: a wrong
    // count would drop a segment some chunk still walks.
    if t.users() != t.count_users() {
        return Err(invalid(
            "the chunk counts per segment do not match the segment table".into(),
        ));
    }
    Ok(())
}

/// Invariant 7 for the tree entered at line `entry`, walked in `searches` searches (the
/// walk's bounds already checked), whose leaves have `leaf_slots` key slots; marks its lines
/// in `claimed`.
fn check_search_tree<K: Key>(
    lines: &[K::Line],
    entry: usize,
    searches: usize,
    leaf_slots: usize,
    claimed: &mut [bool],
) -> Result<(), String> {
    // Each level's lines, from the entry down to the leaves: a level's children follow one
    // another, so they are the run from the first node's link on.
    let mut levels = Vec::with_capacity(searches);
    levels.push(entry..entry + 1);
    for _ in 1..searches {
        let level = levels[levels.len() - 1].clone();
        let start = K::link(&lines[level.start]) as usize;
        let mut end = start;
        for n in level {
            if K::link(&lines[n]) as usize != end {
                return Err(format!(
                    "line {n} links to {}, not to the line after its left neighbour's \
                     children ({end})",
                    K::link(&lines[n])
                ));
            }
            end += K::keys_in(&lines[n], K::INNER_KEYS) + 1;
        }
        levels.push(start..end);
    }
    for n in levels.iter().flat_map(Clone::clone) {
        if std::mem::replace(&mut claimed[n], true) {
            return Err(format!("line {n} is also in another chunk's tree"));
        }
    }
    // Bottom-up, the smallest key under each node of a level (`None`: the first leaf, when
    // it has no key).
    let mut firsts: Vec<Option<K>> = Vec::new();
    let mut last: Option<K> = None;
    for n in levels.pop().into_iter().flatten() {
        let line = &lines[n];
        let keys = ordered_keys::<K>(line, leaf_slots)
            .ok_or_else(|| format!("leaf {n}'s keys do not ascend before their padding"))?;
        let first = (keys > 0).then(|| K::key_at(line, 0));
        match (first, last) {
            (None, Some(_)) => return Err(format!("leaf {n} has no key but is not the first")),
            (Some(k), Some(l)) if k <= l => {
                return Err(format!("leaf {n}'s keys do not follow the previous leaf's"))
            }
            _ => {}
        }
        firsts.push(first);
        if keys > 0 {
            last = Some(K::key_at(line, keys - 1));
        }
    }
    for level in levels.iter().rev() {
        let mut children = firsts.iter().copied();
        let mut above = Vec::with_capacity(level.len());
        for n in level.clone() {
            let line = &lines[n];
            let keys = ordered_keys::<K>(line, K::INNER_KEYS)
                .ok_or_else(|| format!("line {n}'s keys do not ascend before their padding"))?;
            above.push(children.next().flatten());
            for i in 0..keys {
                let k = K::key_at(line, i);
                if children.next().flatten() != Some(k) {
                    return Err(format!(
                        "line {n}'s key {k:?} is not the smallest key under its child {}",
                        i + 1
                    ));
                }
            }
        }
        firsts = above;
    }
    Ok(())
}

/// The number of real keys of a node with `slots` key slots, if they fill its first slots in
/// strictly ascending order (the rest padding).
fn ordered_keys<K: Key>(line: &K::Line, slots: usize) -> Option<usize> {
    let n = K::keys_in(line, slots);
    let ordered = (0..n).all(|i| {
        let k = K::key_at(line, i);
        k != K::PAD && (i == 0 || K::key_at(line, i - 1) < k)
    });
    ordered.then_some(n)
}

#[cfg(test)]
mod tests {
    use super::super::line::Line32;
    use super::super::PlanB;
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
        assert!(!p.tree().narrow());
        p
    }

    #[test]
    fn built_structures_pass() {
        let p = planb6();
        assert!(p.tree().depth() >= 3, "the test wants inner levels");
        check(p.tree()).unwrap();
        let empty = PlanB::<u32>::build(&RouteTable::new(), &BuildOptions::default()).unwrap();
        check(empty.tree()).unwrap();
    }

    /// A copy of `p` whose segment `seg` is edited by `f`.
    fn with_lines(p: &PlanB<u128>, seg: usize, f: impl FnOnce(&mut Vec<Line32>)) -> PlanB<u128> {
        let mut p = p.clone();
        let mut lines = p.tree().lines_of(seg).to_vec();
        f(&mut lines);
        let segment = p.tree().segment(seg).with_lines(lines.into());
        p.tree.set_segment(seg, std::sync::Arc::new(segment));
        p
    }

    #[test]
    fn each_broken_invariant_is_named() {
        let good = planb6();
        let reason = |p: &PlanB<u128>| check(p.tree()).unwrap_err().reason;

        let mut p = good.clone();
        let mut direct = p.tree().flat_direct().to_vec();
        direct[0x2001] = p.tree().lines_of(0).len() as u32;
        p.tree.set_direct(direct.into());
        assert!(reason(&p).contains("direct entry 0x2001"));

        let mut p = good.clone();
        let mut direct = p.tree().flat_direct().to_vec();
        direct[0x2001] |= LEAF_ENTRY;
        p.tree.set_direct(direct.into());
        assert!(
            reason(&p).contains("marked as a leaf"),
            "leaf entry at depth 3+"
        );

        let top = good.tree().entry(0x2001) as usize;
        let p = with_lines(&good, 0, |l| l[top].0[15] = u32::MAX - 1);
        assert!(reason(&p).contains("links to"), "link overflow");

        let mut p = good.clone();
        let home = p.tree().home().to_vec().into();
        p.tree.set_home(home);
        assert!(
            reason(&p).contains("walk's lines"),
            "home not segment 0's lines"
        );
        let mut p = good.clone();
        let lines = p.tree().home().to_vec().into();
        p.tree.set_walk_lines(0, lines);
        assert!(
            reason(&p).contains("walk's lines"),
            "lines not the segment's"
        );

        let mut p = good.clone();
        p.tree.set_depth(0);
        assert!(check(p.tree()).is_err());

        let mut p = good.clone();
        p.tree.set_direct(vec![0; 5].into());
        assert!(check(p.tree()).is_err());

        let mut p = good.clone();
        let first = p.tree().segments()[0].clone();
        p.tree.set_segment(1, first);
        assert!(
            reason(&p).contains("segment table"),
            "two segments need the table"
        );
        let mut flat = p.clone();
        p.tree.set_pages(&vec![0; 1 << DIRECT_BITS]);
        assert!(reason(&p).contains("chunk counts"), "counts not updated");
        p.tree.set_users(vec![1 << DIRECT_BITS, 0]);
        check(p.tree()).unwrap();
        p.tree.set_segment_of_chunk(0x2001, 2);
        assert!(reason(&p).contains("segment 2"));
        p.tree.set_direct(flat.tree().flat_direct().to_vec().into());
        assert!(reason(&p).contains("pages"), "both flat and paged entries");
        flat.tree.set_direct(Vec::new().into());
        assert!(reason(&flat).contains("direct table has 0 entries"));

        // The leaf holding the /64's fallback cell: walk to it with plain counts.
        let mut node = good.tree().entry(0x2001) as usize;
        let x = 0x0db9_0000u32;
        let lines = good.tree().lines_of(0);
        for _ in 1..good.tree().depth() {
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

    /// The lines of chunk 0x2001's tree in `p`, level by level from its root (the builder's
    /// layout: each level's nodes contiguous, their children too).
    fn levels_of(p: &PlanB<u128>) -> Vec<std::ops::Range<usize>> {
        let lines = p.tree().lines_of(0);
        let root = entry_line(p.tree().entry(0x2001)) as usize;
        let mut levels = Vec::new();
        levels.push(root..root + 1);
        for _ in 1..p.tree().depth() {
            let level = levels.last().unwrap().clone();
            let start = lines[level.start].0[15] as usize;
            let children: usize = level
                .map(|n| <u32 as Key>::keys_in(&lines[n], 15) + 1)
                .sum();
            levels.push(start..start + children);
        }
        levels
    }

    #[test]
    fn a_tree_that_is_not_the_search_tree_of_its_ranges_is_refused() {
        let good = planb6();
        let reason = |p: &PlanB<u128>| check(p.tree()).unwrap_err().reason;
        let levels = levels_of(&good);
        assert_eq!(
            levels.len(),
            3,
            "the test wants a root, one inner level and leaves"
        );
        let (root, inner, leaves) = (levels[0].start, levels[1].clone(), levels[2].clone());
        assert!(inner.len() >= 3 && leaves.len() >= 3);

        // Two keys of a leaf swapped.
        let p = with_lines(&good, 0, |l| l[leaves.start].0.swap(0, 1));
        assert!(reason(&p).contains("do not ascend"), "{}", reason(&p));

        // A leaf whose keys start below the previous leaf's last.
        let p = with_lines(&good, 0, |l| {
            l[leaves.start + 1].0[0] = l[leaves.start].0[1]
        });
        assert!(reason(&p).contains("do not follow the previous leaf"));

        // A leaf past the first without keys.
        let p = with_lines(&good, 0, |l| l[leaves.start + 1].0[..7].fill(u32::MAX));
        assert!(reason(&p).contains("has no key"));

        // A key between the real ones and padding that is not padding.
        let p = with_lines(&good, 0, |l| {
            let n = <u32 as Key>::keys_in(&l[root], 15);
            l[root].0[n - 1] = u32::MAX;
            l[root].0[n] = 5;
        });
        assert!(reason(&p).contains("do not ascend"), "{}", reason(&p));

        // An inner key that is not the smallest key under its child: the walk would send
        // the addresses between the two to the wrong leaf.
        let p = with_lines(&good, 0, |l| l[root].0[0] += 1);
        assert!(reason(&p).contains("smallest key"), "{}", reason(&p));
        let p = with_lines(&good, 0, |l| l[inner.start].0[0] -= 1);
        assert!(reason(&p).contains("smallest key"), "{}", reason(&p));

        // An inner node whose children do not follow its left neighbour's.
        let p = with_lines(&good, 0, |l| l[inner.start + 1].0[15] += 1);
        assert!(
            reason(&p).contains("not to the line after"),
            "{}",
            reason(&p)
        );

        // Another chunk entered through a copy of the root: the two trees share lines.
        let mut p = with_lines(&good, 0, |l| l.push(l[root]));
        let mut direct = p.tree().flat_direct().to_vec();
        direct[0x2a00] = p.tree().lines_of(0).len() as u32 - 1;
        p.tree.set_direct(direct.into());
        assert!(
            reason(&p).contains("another chunk's tree"),
            "{}",
            reason(&p)
        );
    }

    #[test]
    fn shared_lines_are_visited_once() {
        // Every chunk names the same deep tree: checking stays linear in lines, not chunks.
        let mut p = planb6();
        let entry = p.tree().entry(0x2001);
        let direct = vec![entry; p.tree().flat_direct().len()].into();
        p.tree.set_direct(direct);
        check(p.tree()).unwrap();
    }
}
