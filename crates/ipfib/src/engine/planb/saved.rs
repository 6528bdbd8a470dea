//! PlanB's sections in a saved table ([`crate::saved`]), written and read in one place.
//!
//! Per family: `META` (depth, intervals, distinct results, segments, leaf format, as `u64`;
//! files written before narrow leaves existed have the first four, and wide leaves), `DIRECT` (the
//! direct table), `SEGMENT_OF` (the per-chunk segment table, empty with one segment), and per
//! segment `LINES` (the 64-byte nodes), `CELLS`, `STARTS` and `ANSWERS` (its fallback cells),
//! and `SPLITS` where the structure takes staged tables: the chunks given sub-tables and their
//! widths ([`super::staged::Staged::choice`]), so that an open makes the sub-tables without
//! choosing them again (files without it choose at open).
//! The direct table and the lines, nearly all of the bytes, are used in place in the file's
//! mapping; the rest is small and copied. Nothing read is trusted: every invariant the
//! unchecked walk relies on is checked by [`super::validate`] before the structure exists as
//! a `PlanB`, and `SPLITS` by [`super::staged::Staged::with_splits`]. (`SPLITS` came after
//! version 1 files were first written, without a version change: older readers refuse a file
//! that has it as having an unknown section. The choice is made from the structure alone, so
//! a file is the same whether or not the CPU that wrote it runs AVX-512.)

use std::borrow::Cow;
use std::sync::Arc;

use super::fallback::Fallback;
use super::layout::{Family, DIRECT_BITS};
use super::line::Segment;
use super::tree::{Parts, Tree};
use super::PlanB;
use crate::engine::Backend;
use crate::error::OpenError;
use crate::saved::format::{Reader, SectionId, Writer};
use crate::saved::words;

const META: u32 = 1;
const DIRECT: u32 = 2;
const SEGMENT_OF: u32 = 3;
const LINES: u32 = 4;
const CELLS: u32 = 5;
const STARTS: u32 = 6;
const ANSWERS: u32 = 7;
const SPLITS: u32 = 8;

/// `ANSWERS` holds a (flag, hop) pair per interval: flag 1 = a route, 0 = no route.
const ROUTE: u32 = 1;

/// A `META` count that is not known (a table changed by partial rebuilds).
const UNKNOWN: u64 = u64::MAX;

fn id<A: Family>(tag: u32, index: usize) -> SectionId {
    SectionId {
        tag,
        family: words::family::<A>(),
        index: index as u32,
    }
}

impl<A: Family> PlanB<A> {
    /// Adds this family's sections to `w`.
    pub(crate) fn write_sections<'a>(&'a self, w: &mut Writer<'a>) {
        w.owned(id::<A>(META, 0), self.meta().to_vec());
        self.write_arrays(w, super::staged::Staged::choice(self));
    }

    /// The `META` words.
    fn meta(&self) -> [u64; 5] {
        // Counts a partial rebuild does not know are written as `UNKNOWN`.
        let known = |c: Option<usize>| c.map_or(UNKNOWN, |c| c as u64);
        let tree = self.tree();
        [
            tree.depth() as u64,
            known(tree.intervals()),
            known(tree.results()),
            tree.segments().len() as u64,
            u64::from(tree.narrow()),
        ]
    }

    /// Every section but `META`, with `splits` as `SPLITS` (none: no such section).
    fn write_arrays<'a>(&'a self, w: &mut Writer<'a>, splits: Option<Vec<u32>>) {
        let tree = self.tree();
        match tree.entries() {
            Cow::Borrowed(direct) => w.array(id::<A>(DIRECT, 0), direct),
            Cow::Owned(direct) => w.owned(id::<A>(DIRECT, 0), direct),
        }
        if let Some(splits) = splits {
            w.owned(id::<A>(SPLITS, 0), splits);
        }
        w.owned(id::<A>(SEGMENT_OF, 0), tree.segment_table());
        for (i, segment) in tree.segments().iter().enumerate() {
            w.array(id::<A>(LINES, i), &segment.lines);
            let (cells, starts, answers) = segment.fallback.parts();
            let cells: Vec<u32> = cells.iter().flat_map(|&(b, e)| [b, e]).collect();
            w.owned(id::<A>(CELLS, i), cells);
            w.owned(
                id::<A>(STARTS, i),
                words::from_addresses(starts.iter().copied()),
            );
            let answers: Vec<u32> = answers
                .iter()
                .flat_map(|a| a.map_or([0, 0], |hop| [ROUTE, hop]))
                .collect();
            w.owned(id::<A>(ANSWERS, i), answers);
        }
    }

    /// This family's structure from `r`, checked by the validator; nodes are searched with
    /// `backend`.
    pub(crate) fn read_sections(r: &Reader, backend: Backend) -> Result<Self, OpenError> {
        let meta = r.array::<u64>(id::<A>(META, 0))?;
        let (head, format) = match &meta[..] {
            [head @ .., format] if meta.len() == 5 => (head, *format),
            head => (head, 0),
        };
        let &[depth, intervals, results, segments] = head else {
            return Err(OpenError::Format(format!(
                "{} has {} words, expected 4 or 5",
                id::<A>(META, 0),
                meta.len()
            )));
        };
        let narrow = match format {
            0 => false,
            1 => true,
            f => return Err(OpenError::Format(format!("leaf format {f} is not 0 or 1"))),
        };
        let count = |v: u64| usize::try_from(v).ok();
        // Every segment has its own sections, so their number bounds a plausible count before
        // anything is allocated for it.
        let segments = count(segments)
            .filter(|&s| s >= 1 && s == r.count(LINES, words::family::<A>()))
            .ok_or_else(|| {
                OpenError::Format(format!(
                    "{segments} segments, but {} line sections",
                    r.count(LINES, words::family::<A>())
                ))
            })?;
        let maybe = |v: u64| {
            if v == UNKNOWN {
                Some(None)
            } else {
                count(v).map(Some)
            }
        };
        let (Some(depth), Some(intervals), Some(results)) =
            (count(depth), maybe(intervals), maybe(results))
        else {
            return Err(OpenError::Format(
                "a count does not fit this machine's usize".into(),
            ));
        };
        let mut parts = Vec::with_capacity(segments);
        for i in 0..segments {
            let cells = r.array::<u32>(id::<A>(CELLS, i))?;
            let starts = r.array::<u32>(id::<A>(STARTS, i))?;
            let answers = r.array::<u32>(id::<A>(ANSWERS, i))?;
            if cells.len() % 2 != 0
                || answers.len() % 2 != 0
                || starts.len() % words::per_address::<A>() != 0
            {
                return Err(OpenError::Format(format!(
                    "segment {i}'s fallback arrays have odd lengths"
                )));
            }
            let answers = answers
                .chunks_exact(2)
                .map(|p| match p[0] {
                    0 => Ok(None),
                    ROUTE => Ok(Some(p[1])),
                    f => Err(OpenError::Format(format!(
                        "segment {i}: fallback answer flag {f}"
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let fallback = Fallback::from_parts(
                cells.chunks_exact(2).map(|p| (p[0], p[1])).collect(),
                words::to_addresses(&starts).collect(),
                answers,
            );
            parts.push(Arc::new(Segment::new(
                r.array(id::<A>(LINES, i))?,
                fallback,
            )));
        }
        let cpu =
            crate::cpu::Cpu::new(backend).ok_or(crate::error::BuildError::BackendUnavailable {
                backend: backend.name(),
            })?;
        let direct = r.array::<u32>(id::<A>(DIRECT, 0))?;
        let segment_of = r.array::<u16>(id::<A>(SEGMENT_OF, 0))?;
        let chunks = 1usize << DIRECT_BITS;
        if direct.len() != chunks || !segment_of.is_empty() && segment_of.len() != chunks {
            return Err(OpenError::Format(format!(
                "a direct table of {} entries and a segment table of {}, expected {chunks} \
                 (and 0 or {chunks})",
                direct.len(),
                segment_of.len()
            )));
        }
        // Nothing is known dead in a file: every line counts as used until compaction finds
        // out otherwise (`Parts::saved`).
        let parts = Parts::saved(
            direct,
            &segment_of,
            parts,
            depth,
            narrow,
            intervals,
            results,
        )
        .ok_or_else(|| {
            OpenError::Format(
                "a table of several segments whose entries do not fit a live table's pages \
                 (an entry line of 2^21 or more, or a segment number of 1024 or more)"
                    .into(),
            )
        })?;
        let tree = Tree::from_parts(parts);
        let mut planb = PlanB {
            tree,
            cpu,
            staged: None,
        };
        super::validate::check(planb.tree())?;
        planb.staged = if r.count(SPLITS, words::family::<A>()) == 0 {
            super::staged::Staged::of(&planb)
        } else {
            let splits = r.array::<u32>(id::<A>(SPLITS, 0))?;
            super::staged::Staged::with_splits(&planb, &splits).map_err(OpenError::Format)?
        };
        Ok(planb)
    }
}

/// `t`'s sections (with `meta` as its `META` words, else its own) written to a file in memory
/// and read back with `backend`, every section used.
#[cfg(test)]
pub(super) fn reread<A: Family>(
    t: &PlanB<A>,
    meta: Option<&[u64]>,
    backend: Backend,
) -> Result<PlanB<A>, OpenError> {
    let bytes = file_bytes(t, meta, super::staged::Staged::choice(t));
    read_back(&bytes, backend)
}

/// As [`reread`], from a file without `SPLITS` (one written before it existed).
#[cfg(test)]
pub(super) fn reread_without_splits<A: Family>(
    t: &PlanB<A>,
    backend: Backend,
) -> Result<PlanB<A>, OpenError> {
    read_back(&file_bytes(t, None, None), backend)
}

/// The bytes of a file of `t`'s sections, `meta` as its `META` words (else its own) and
/// `splits` as `SPLITS`.
#[cfg(test)]
pub(super) fn file_bytes<A: Family>(
    t: &PlanB<A>,
    meta: Option<&[u64]>,
    splits: Option<Vec<u32>>,
) -> Vec<u8> {
    let mut w = Writer::new("planb");
    w.owned(
        id::<A>(META, 0),
        meta.map_or_else(|| t.meta().to_vec(), <[u64]>::to_vec),
    );
    t.write_arrays(&mut w, splits);
    let mut bytes = Vec::new();
    w.write(&mut bytes).expect("writing to memory");
    bytes
}

/// The structure in the file `bytes`, read with `backend`, every section used.
#[cfg(test)]
fn read_back<A: Family>(bytes: &[u8], backend: Backend) -> Result<PlanB<A>, OpenError> {
    let r = Reader::new(Arc::new(crate::storage::Backing::copy(bytes)))?;
    let back = PlanB::read_sections(&r, backend)?;
    r.check_all_used()?;
    Ok(back)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Build, BuildOptions, Lookup};
    use crate::prefix::Prefix;
    use crate::route_table::RouteTable;

    /// `t`'s sections with `meta` as its `META` words, read back.
    fn reread(t: &PlanB<u32>, meta: &[u64]) -> Result<PlanB<u32>, OpenError> {
        super::reread(t, Some(meta), Backend::Scalar)
    }

    /// Files from before narrow leaves (four `META` words) open as wide; a leaf format this
    /// code does not know is refused; both formats round-trip.
    #[test]
    fn leaf_format_in_meta() {
        for widest in [7, 1 << 20] {
            let table: RouteTable<u32> = (0..50u32)
                .map(|i| (Prefix::new(0x0a00_0000 | (i << 8), 24).unwrap(), i % 3))
                .chain([(Prefix::new(0, 1).unwrap(), widest)])
                .collect();
            let t = PlanB::build(&table, &BuildOptions::default()).unwrap();
            assert_eq!(t.tree().narrow(), widest < 1 << 16);
            let meta = t.meta();
            let back = reread(&t, &meta).unwrap();
            assert_eq!(back.tree().narrow(), t.tree().narrow());
            for a in [0u32, 0x0a00_0105, 0x0a00_3200, 0x7fff_ffff, u32::MAX] {
                assert_eq!(back.lookup(a), table.longest_match(a).map(|(_, h)| h));
            }
            let mut bad = meta;
            bad[4] = 2;
            assert!(reread(&t, &bad).is_err());
            if !t.tree().narrow() {
                let old = reread(&t, &meta[..4]).unwrap();
                assert!(!old.tree().narrow());
                assert_eq!(old.lookup(0x0a00_0105), Some(1));
            }
        }
    }
}
