//! Building a PlanB structure from a route table.
//!
//! 1. Interval partitioning ([`crate::interval`]) gives merged elementary intervals.
//! 2. Each distinct answer gets a dense result id (0 = no route).
//! 3. The intervals are projected onto *coarse cells* (the top 32 bits for IPv4, 48 for IPv6);
//!    a cell with boundaries inside it is handed to the [`Fallback`] stage.
//! 4. The coarse boundaries are split by their top 16 bits into chunks; each chunk with
//!    boundaries gets its own small linearized B+-tree, levels sized to its data. All trees are
//!    walked with the same number of steps: a shallower tree starts on a shared all-padding
//!    node that always sends the walk to child 0, so lanes in a batch never diverge.

use std::collections::HashMap;

use super::fallback::Fallback;
use super::layout::{chunk_of, fanout, keys_per_node, Family, Key, DIRECT_BITS};
use super::PlanB;
use crate::interval::Intervals;
use crate::table::{NextHop, RouteTable};

/// The answers and the result id of each interval.
struct ResultIds {
    results: Vec<Option<NextHop>>,
    ids: Vec<u32>,
}

fn result_ids(values: &[Option<NextHop>]) -> ResultIds {
    let mut results = vec![None];
    let mut id_of: HashMap<NextHop, u32> = HashMap::new();
    let ids = values
        .iter()
        .map(|v| match v {
            None => 0,
            Some(nh) => *id_of.entry(*nh).or_insert_with(|| {
                results.push(Some(*nh));
                (results.len() - 1) as u32
            }),
        })
        .collect();
    ResultIds { results, ids }
}

/// Coarse boundaries (ascending, the first at 0) with their result ids; ids `>= fb_base` name a
/// fallback cell.
fn project<A: Family>(
    starts: &[A],
    ids: &[u32],
    fb_base: u32,
    fallback: &mut Fallback<A>,
) -> (Vec<u64>, Vec<u32>) {
    let cells_end: u128 = 1u128 << A::COARSE_BITS;
    let mut cstarts: Vec<u64> = Vec::with_capacity(starts.len());
    let mut cids: Vec<u32> = Vec::with_capacity(starts.len());
    let mut push = |at: u64, id: u32| {
        if cids.last() == Some(&id) {
            return;
        }
        cstarts.push(at);
        cids.push(id);
    };
    let mut i = 0;
    while i < starts.len() {
        let cell = starts[i].coarse();
        let mut j = i + 1;
        while j < starts.len() && starts[j].coarse() == cell {
            j += 1;
        }
        if j - i == 1 && starts[i].is_cell_aligned() {
            push(cell, ids[i]);
        } else {
            let first = A::from_coarse(cell);
            // starts[0] is 0, which is cell-aligned, so a cell not starting with a boundary has
            // a predecessor interval covering its first address.
            let head = if starts[i] == first {
                None
            } else {
                Some((first, ids[i - 1]))
            };
            let f = fallback.push_cell(head.into_iter().chain((i..j).map(|k| (starts[k], ids[k]))));
            push(cell, fb_base + f);
            let next = u128::from(cell) + 1;
            let next_starts_cell = j < starts.len() && u128::from(starts[j].coarse()) == next;
            if next < cells_end && !next_starts_cell {
                push(next as u64, ids[j - 1]);
            }
        }
        i = j;
    }
    (cstarts, cids)
}

/// Tree levels for `n` keys: leaves of `SLOTS - 1` keys, then inner levels of fan-out `SLOTS`
/// up to a single root. Zero keys need no tree.
fn depth_for<K: Key>(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let mut nodes = n.div_ceil(keys_per_node::<K>());
    let mut depth = 1;
    while nodes > 1 {
        nodes = nodes.div_ceil(fanout::<K>() as usize);
        depth += 1;
    }
    depth
}

/// One chunk's boundaries: stored keys (`boundary - 1`) and `keys.len() + 1` result ids.
struct Chunk<K> {
    index: usize,
    keys: Vec<K>,
    ids: Vec<u32>,
}

/// Splits coarse boundaries into the 2^16 chunks; returns the chunks with keys and, for every
/// chunk, the id in effect at its first address.
fn chunks<A: Family>(cstarts: &[u64], cids: &[u32]) -> (Vec<Chunk<A::Key>>, Vec<u32>) {
    let key_bits = A::COARSE_BITS - DIRECT_BITS;
    let mut with_keys = Vec::new();
    let mut head_ids = Vec::with_capacity(1 << DIRECT_BITS);
    let mut p = 0;
    let mut current = cids[0];
    for chunk in 0..(1usize << DIRECT_BITS) {
        let base = (chunk as u64) << key_bits;
        if p < cstarts.len() && cstarts[p] == base {
            current = cids[p];
            p += 1;
        }
        head_ids.push(current);
        let mut keys = Vec::new();
        let mut ids = vec![current];
        while p < cstarts.len() && chunk_of::<A>(cstarts[p]) == chunk {
            keys.push(A::Key::from_coarse(cstarts[p] - 1));
            ids.push(cids[p]);
            current = cids[p];
            p += 1;
        }
        if !keys.is_empty() {
            with_keys.push(Chunk {
                index: chunk,
                keys,
                ids,
            });
        }
    }
    (with_keys, head_ids)
}

/// Appends the levels of one chunk's tree to `nodes` (root first); returns each level's offset.
fn build_tree<K: Key>(keys: &[K], nodes: &mut Vec<K::Node>) -> Vec<u32> {
    let per = keys_per_node::<K>();
    let fan = fanout::<K>() as usize;
    // first[l][i]: smallest key under node i of level l (levels bottom-up here).
    let leaves: Vec<&[K]> = keys.chunks(per).collect();
    let mut first: Vec<Vec<K>> = vec![leaves.iter().map(|l| l[0]).collect()];
    let mut levels: Vec<Vec<K::Node>> = vec![leaves.iter().map(|l| K::node(l)).collect()];
    while first.last().map_or(0, Vec::len) > 1 {
        let below = first.last().expect("non-empty");
        let mut level = Vec::new();
        let mut level_first = Vec::new();
        for children in below.chunks(fan) {
            level.push(K::node(&children[1..]));
            level_first.push(children[0]);
        }
        levels.push(level);
        first.push(level_first);
    }
    let mut offsets = Vec::with_capacity(levels.len());
    for level in levels.into_iter().rev() {
        offsets.push(nodes.len() as u32);
        nodes.extend(level);
    }
    offsets
}

/// The result ids in leaf-slot order: slot `j` of leaf `l` is the id after `j` keys of that
/// leaf, i.e. `ids[l * keys_per_node + j]` (slot 0 repeats the previous leaf's last id, so a
/// lookup needs no subtraction). Slots past the chunk's last key are never reached.
fn leaf_slots<K: Key>(ids: &[u32]) -> impl Iterator<Item = u32> + '_ {
    let keys = ids.len() - 1;
    let per = keys_per_node::<K>();
    let leaves = keys.div_ceil(per);
    (0..leaves * fanout::<K>() as usize).map(move |slot| {
        let (leaf, j) = (slot / fanout::<K>() as usize, slot % fanout::<K>() as usize);
        ids[(leaf * per + j).min(keys)]
    })
}

/// Builds the whole structure.
pub(super) fn build<A: Family>(table: &RouteTable<A>) -> PlanB<A> {
    let intervals = Intervals::from_table(table);
    let ResultIds { results, ids } = result_ids(intervals.values());
    let fb_base = results.len() as u32;
    let mut fallback = Fallback::default();
    let (cstarts, cids) = project(intervals.starts(), &ids, fb_base, &mut fallback);
    let (chunks, head_ids) = chunks::<A>(&cstarts, &cids);

    let depth = chunks
        .iter()
        .map(|c| depth_for::<A::Key>(c.keys.len()))
        .max()
        .unwrap_or(0)
        .max(1);
    let stride = depth + 1;
    // Node 0 is the shared all-padding node that shallow trees start on.
    let mut nodes = vec![A::Key::node(&[])];
    let mut values: Vec<u32> = Vec::new();
    let mut descs: Vec<u32> = Vec::new();
    let mut direct = vec![0u16; 1 << DIRECT_BITS];
    let mut constant_desc: HashMap<u32, u16> = HashMap::new();
    let mut next_with_keys = chunks.iter().peekable();
    for (chunk, &head) in head_ids.iter().enumerate() {
        let desc_index = (descs.len() / stride) as u16;
        match next_with_keys.next_if(|c| c.index == chunk) {
            Some(c) => {
                let offsets = build_tree(&c.keys, &mut nodes);
                descs.extend(std::iter::repeat_n(0, depth - offsets.len()));
                descs.extend(offsets);
                descs.push(values.len() as u32);
                values.extend(leaf_slots::<A::Key>(&c.ids));
                direct[chunk] = desc_index;
            }
            None => {
                direct[chunk] = *constant_desc.entry(head).or_insert_with(|| {
                    descs.extend(std::iter::repeat_n(0, depth));
                    descs.push(values.len() as u32);
                    values.push(head);
                    desc_index
                });
            }
        }
    }
    PlanB::from_parts(super::Parts {
        direct: direct.into_boxed_slice(),
        descs: descs.into_boxed_slice(),
        depth,
        nodes: nodes.into_boxed_slice(),
        values: values.into_boxed_slice(),
        results: results.into_boxed_slice(),
        fallback,
        intervals: intervals.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_grows_with_fanout() {
        assert_eq!(depth_for::<u32>(0), 0);
        assert_eq!(depth_for::<u32>(1), 1);
        assert_eq!(depth_for::<u32>(15), 1);
        assert_eq!(depth_for::<u32>(16), 2);
        assert_eq!(depth_for::<u32>(15 * 16), 2);
        assert_eq!(depth_for::<u32>(15 * 16 + 1), 3);
        assert_eq!(depth_for::<u16>(31 * 32), 2);
        assert_eq!(depth_for::<u16>(31 * 32 + 1), 3);
    }

    #[test]
    fn tree_levels_are_sized_to_the_data() {
        let keys: Vec<u32> = (1..=300).collect();
        let mut nodes = vec![];
        let offsets = build_tree(&keys, &mut nodes);
        // 300 keys: 20 leaves of 15, 2 inner nodes of up to 16 children, 1 root.
        assert_eq!(offsets, vec![0, 1, 3]);
        assert_eq!(nodes.len(), 1 + 2 + 20);
    }

    #[test]
    fn leaf_slots_repeat_the_previous_leaf_end() {
        // 17 keys: leaf 0 holds keys 1..=15, leaf 1 keys 16..=17; ids[k] follows k keys.
        let ids: Vec<u32> = (100..=117).collect();
        let slots: Vec<u32> = leaf_slots::<u32>(&ids).collect();
        assert_eq!(slots.len(), 32);
        assert_eq!(&slots[..16], &(100..=115).collect::<Vec<_>>()[..]);
        assert_eq!(&slots[16..19], &[115, 116, 117]);
        assert!(slots[19..].iter().all(|&v| v == 117));
    }
}
