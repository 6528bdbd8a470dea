//! Partial rebuilds, for live tables: a change rebuilds only the chunks it touches.
//!
//! PlanB is partitioned already: the direct table names one tree per top-16-bit chunk, and a
//! tree's lines live in a shared segment. A partial rebuild builds the touched chunks' trees
//! from the routes that overlap each chunk (the routes containing it and those inside it) into
//! one new segment, copies the direct table and the per-chunk segment table (fixed sizes:
//! 256 KiB and 128 KiB, whatever the number of routes) with the touched entries pointed at the
//! new segment, and shares every other segment with the version before. Segments no chunk
//! uses any more are dropped, so the memory of a replaced tree goes with the last version that
//! can see it.
//!
//! A partial rebuild declines (the caller builds in full, which also compacts) when:
//! - a change touches very many chunks (a short prefix: a /8 covers 256 of them, a /0 all);
//! - a touched chunk now needs a deeper tree than the table's uniform depth;
//! - the replaced trees' dead lines would make the table much larger than a full build, or
//!   the segments would be too many.

use std::collections::HashMap;
use std::sync::Arc;

use super::builder::{chunk_content, depth_for, SegmentBuilder};
use super::layout::{chunk_of, Family, Segment, DIRECT_BITS};
use super::{Parts, PlanB};
use crate::prefix::Prefix;
use crate::route_table::RouteTable;

/// A change touching more chunks than this rebuilds in full (a full build visits all 65,536).
const MAX_TOUCHED: usize = 4096;
/// Segments a table may have before a full build compacts them into one.
const MAX_SEGMENTS: usize = 256;
/// A partial rebuild declines when the lines of all segments would exceed the last full
/// build's by more than this factor (plus [`SLACK_LINES`], so small tables do not rebuild in
/// full on every change).
const MAX_GROWTH: f64 = 1.5;
/// Lines of growth always allowed (1 MiB of lines).
const SLACK_LINES: usize = 1 << 14;

/// The chunks the changed prefixes overlap, ascending, or `None` when they are too many.
fn touched<A: Family>(changed: &[Prefix<A>]) -> Option<Vec<usize>> {
    let mut chunks: Vec<usize> = Vec::new();
    for p in changed {
        let first = chunk_of::<A>(p.first().coarse());
        let last = chunk_of::<A>(p.last().coarse());
        if last - first >= MAX_TOUCHED {
            return None;
        }
        chunks.extend(first..=last);
        if chunks.len() > 2 * MAX_TOUCHED {
            chunks.sort_unstable();
            chunks.dedup();
            if chunks.len() > MAX_TOUCHED {
                return None;
            }
        }
    }
    chunks.sort_unstable();
    chunks.dedup();
    (chunks.len() <= MAX_TOUCHED).then_some(chunks)
}

impl<A: Family> PlanB<A> {
    /// The parts of this table rebuilt for `table` after `changed` changed (module docs), or
    /// `None` when a full build is the better answer.
    pub(super) fn partial_parts(
        &self,
        table: &RouteTable<A>,
        changed: &[Prefix<A>],
    ) -> Option<Parts<A>> {
        let chunks = touched(changed)?;
        if self.segments.len() >= MAX_SEGMENTS {
            return None;
        }
        let mut segment = SegmentBuilder::<A>::new();
        let mut constants = HashMap::new();
        let mut entries = Vec::with_capacity(chunks.len());
        for &chunk in &chunks {
            let (keys, answers) = chunk_content(table, chunk, &mut segment.fallback);
            if depth_for::<A::Key>(keys.len()) > self.depth {
                return None;
            }
            entries.push(segment.chunk(self.depth, &keys, &answers, &mut constants));
        }

        let mut direct = self.direct.clone();
        let mut segment_of = if self.segment_of.is_empty() {
            vec![0u16; 1 << DIRECT_BITS]
        } else {
            self.segment_of.to_vec()
        };
        let fresh = self.segments.len() as u16;
        for (&chunk, &entry) in chunks.iter().zip(&entries) {
            direct[chunk] = entry;
            segment_of[chunk] = fresh;
        }
        let mut segments = self.segments.clone();
        segments.push(Arc::new(Segment {
            lines: segment.lines.into(),
            fallback: segment.fallback,
        }));

        // Keep the segments some chunk still uses, in their order, and renumber.
        let mut used = vec![false; segments.len()];
        for &s in &segment_of {
            used[usize::from(s)] = true;
        }
        let mut renumber = vec![0u16; segments.len()];
        let mut kept = Vec::with_capacity(segments.len());
        for (i, s) in segments.into_iter().enumerate() {
            if used[i] {
                renumber[i] = kept.len() as u16;
                kept.push(s);
            }
        }
        let segment_of: Box<[u16]> = if kept.len() == 1 {
            Box::new([])
        } else {
            segment_of
                .iter()
                .map(|&s| renumber[usize::from(s)])
                .collect()
        };

        let lines: usize = kept.iter().map(|s| s.lines.len()).sum();
        if lines as f64 > self.built_lines as f64 * MAX_GROWTH + SLACK_LINES as f64 {
            return None;
        }
        Some(Parts {
            direct,
            segment_of,
            segments: kept,
            depth: self.depth,
            intervals: None,
            results: None,
            built_lines: Some(self.built_lines),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Backend, Build, BuildOptions, Lookup};
    use crate::interval::Intervals;
    use crate::route_table::NextHop;
    use proptest::prelude::*;

    fn build(table: &RouteTable<u32>) -> PlanB<u32> {
        PlanB::build(table, &BuildOptions::with_backend(Backend::Scalar)).unwrap()
    }

    /// `t` answers every probe as a binary search over `table`'s intervals does.
    fn agrees(t: &PlanB<u32>, table: &RouteTable<u32>, probes: &[u32]) {
        let intervals = Intervals::from_table(table);
        for &a in probes {
            assert_eq!(t.lookup(a), intervals.lookup(a), "address {a:#010x}");
        }
        let mut batch = vec![None; probes.len()];
        t.lookup_batch(probes, &mut batch).unwrap();
        let want: Vec<Option<NextHop>> = probes.iter().map(|&a| intervals.lookup(a)).collect();
        assert_eq!(batch, want);
        t.validate().unwrap();
    }

    fn probes(table: &RouteTable<u32>) -> Vec<u32> {
        table
            .iter()
            .flat_map(|(p, _)| {
                [
                    p.first(),
                    p.last(),
                    p.first().wrapping_sub(1),
                    p.last().wrapping_add(1),
                ]
            })
            .chain((0..200u32).map(|i| i.wrapping_mul(0x0147_ae15)))
            .collect()
    }

    #[test]
    fn a_change_rebuilds_its_chunk_into_a_new_segment() {
        let mut table: RouteTable<u32> = (0..300u32)
            .map(|i| (Prefix::new(0x0a00_0000 | (i << 8), 24).unwrap(), i))
            .chain([(Prefix::new(0xc0a8_0000, 16).unwrap(), 7)])
            .collect();
        let old = build(&table);
        let p = Prefix::new(0xc0a8_0100, 24).unwrap();
        table.insert(p, 8);
        let new =
            PlanB::from_parts(old.partial_parts(&table, &[p]).unwrap(), Backend::Scalar).unwrap();
        assert_eq!(
            new.segments.len(),
            2,
            "the old segment is shared, the chunk is new"
        );
        assert!(Arc::ptr_eq(&new.segments[0], &old.segments[0]));
        assert_eq!(new.segment_of[0xc0a8], 1);
        assert_eq!(new.segment_of[0x0a00], 0);
        agrees(&new, &table, &probes(&table));
        agrees(
            &old,
            &table.iter().filter(|&(q, _)| q != p).collect(),
            &probes(&table),
        );
        assert_eq!(new.intervals(), None);

        // Changing the chunk again leaves the second segment unused: it is dropped.
        table.remove(p);
        let newer =
            PlanB::from_parts(new.partial_parts(&table, &[p]).unwrap(), Backend::Scalar).unwrap();
        assert_eq!(newer.segments.len(), 2);
        assert!(!Arc::ptr_eq(&newer.segments[1], &new.segments[1]));
        agrees(&newer, &table, &probes(&table));
    }

    #[test]
    fn wide_or_deepening_changes_decline() {
        let mut table: RouteTable<u32> = [(Prefix::new(0x0a00_0000, 24).unwrap(), 1)]
            .into_iter()
            .collect();
        let t = build(&table);
        let wide = Prefix::new(0, 1).unwrap();
        table.insert(wide, 2);
        assert!(t.partial_parts(&table, &[wide]).is_none(), "32,768 chunks");
        let deep: Vec<Prefix<u32>> = (0..200u32)
            .map(|i| Prefix::new(0x0b00_0000 | (i << 8), 24).unwrap())
            .collect();
        for (i, &p) in deep.iter().enumerate() {
            table.insert(p, i as u32);
        }
        assert_eq!(t.depth, 1);
        assert!(
            t.partial_parts(&table, &deep).is_none(),
            "the chunk needs depth 2"
        );
    }

    #[test]
    fn ipv6_fallback_cells_move_with_their_chunk() {
        let mut table: RouteTable<u128> = (0..100u128)
            .map(|i| {
                (
                    Prefix::new((0x2001_0db8 << 96) | (i << 80), 48).unwrap(),
                    i as u32,
                )
            })
            .collect();
        let t = PlanB::build(&table, &BuildOptions::with_backend(Backend::Scalar)).unwrap();
        let p = Prefix::new((0x2001_0db8_0005 << 80) | (9 << 64), 64).unwrap();
        table.insert(p, 999);
        let new =
            PlanB::from_parts(t.partial_parts(&table, &[p]).unwrap(), Backend::Scalar).unwrap();
        assert_eq!(new.segments[1].fallback.cells(), 1);
        let intervals = Intervals::from_table(&table);
        for a in [
            p.first(),
            p.last(),
            p.first() - 1,
            p.last() + 1,
            (0x2001_0db8_0063 << 80),
        ] {
            assert_eq!(new.lookup(a), intervals.lookup(a), "address {a:#x}");
        }
        new.validate().unwrap();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Any sequence of changes applied by partial rebuilds (a full build whenever one
        /// declines) answers like the reference.
        #[test]
        fn partial_rebuilds_agree_with_the_intervals(
            base in proptest::collection::vec((any::<u32>(), 8u8..=32, 0u32..50), 0..60),
            steps in proptest::collection::vec(
                proptest::collection::vec((any::<u32>(), 4u8..=32, 0u32..50, any::<bool>()), 1..6),
                1..5,
            ),
        ) {
            let mut table: RouteTable<u32> = base
                .iter()
                .map(|&(a, l, h)| (Prefix::covering(a, l), h))
                .collect();
            let mut t = build(&table);
            for step in steps {
                let mut changed = Vec::new();
                for (a, l, h, insert) in step {
                    // Removals pick an existing route when there is one.
                    let p = match table.iter().nth(a as usize % (table.len() + 1)) {
                        Some((q, _)) if !insert => q,
                        _ => Prefix::covering(a, l),
                    };
                    if insert {
                        table.insert(p, h);
                    } else {
                        table.remove(p);
                    }
                    changed.push(p);
                }
                t = match t.partial_parts(&table, &changed) {
                    Some(parts) => PlanB::from_parts(parts, Backend::Scalar).unwrap(),
                    None => build(&table),
                };
                agrees(&t, &table, &probes(&table));
            }
        }
    }
}
