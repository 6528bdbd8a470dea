//! The per-chunk tables of a paged tree (a live table between settling merges: several
//! segments, or partial rebuilds appended to its one): each chunk's direct entry and segment,
//! in pages of [`PAGE_CHUNKS`] chunks that versions share.
//!
//! A partial rebuild changes the entries of a few chunks. With flat tables every version
//! copied both whole (256 KiB of entries, 128 KiB of segment numbers), and every lookup starts
//! in them, so after each publish a reader refilled its cache with the fresh copies from the
//! rebuilder's core: about 1.1 ms of reader time a publish on a 115 K-route table whose walk
//! otherwise stays in the reader's 1 MiB L2 (AMD EPYC Zen 4, BENCHMARKS.md "Session 32").
//! Paged, a version copies only the pages its changes touch (4 KiB each: a chunk's entry and
//! segment share a 32-bit slot, [`pack`]) and shares the rest, cache lines and all, with the
//! version before. A walk reaches a slot through the page's pointer, one more load from a
//! 512-byte table that stays in L1.
//!
//! A tree with flat entries (every static table, a live table after settling or while every
//! chunk is in its home segment: one segment) keeps its entries in one flat array
//! (`Tree::direct`), which the one-segment walks and the staged batch read directly. A live
//! table whose partial rebuilds append to its home segment copies that array per publish:
//! with every lane walking from one base, readers lose less to the refill than to the paged
//! walk (`Tree::with_chunks_appended`).

use std::sync::Arc;

use super::layout::{entry_line, DIRECT_BITS, LEAF_ENTRY};

/// Bits of a chunk number that select its place in a page.
pub(super) const PAGE_BITS: u32 = 10;
/// Chunks per page.
pub(super) const PAGE_CHUNKS: usize = 1 << PAGE_BITS;
/// Pages of a tree: every chunk is in one.
const PAGES: usize = 1 << (DIRECT_BITS - PAGE_BITS);

/// Bits of a slot that hold the entry's line: a segment of a paged tree has at most 2^21
/// lines before its entries stop fitting (128 MiB of lines; the largest real table here,
/// IPv6 ris-all, needs far fewer), and a partial rebuild or compaction step that would need
/// more declines (a full build gives one segment, whose flat entries take any line).
const LINE_BITS: u32 = 21;
/// Bits of a slot that hold the segment number, above the line's.
const SEGMENT_BITS: u32 = 10;
/// Segments a paged tree may have, every number fitting a slot (a partial rebuild that would
/// need more builds in full; compaction steps normally keep far fewer).
pub(super) const MAX_SEGMENTS: usize = 1 << SEGMENT_BITS;
const LINE_MASK: u32 = (1 << LINE_BITS) - 1;
const SEGMENT_MASK: u32 = (1 << SEGMENT_BITS) - 1;
const _: () = assert!(LINE_BITS + SEGMENT_BITS < 32 && LEAF_ENTRY == 1 << 31);

/// A chunk's direct entry and segment in one slot: [`LEAF_ENTRY`] where the entry has it,
/// the segment in the next [`SEGMENT_BITS`] bits, the entry's line in the low [`LINE_BITS`].
/// One load gives a walk both: kept in two arrays, the segment numbers were a second cache
/// line per lookup (a D1 miss on 83 % of the reads, cachegrind, IPv4 et120k live table).
/// `None` when they do not fit.
#[inline(always)]
fn pack(entry: u32, segment: u16) -> Option<u32> {
    let line = entry_line(entry);
    (line <= LINE_MASK && u32::from(segment) <= SEGMENT_MASK)
        .then(|| entry & LEAF_ENTRY | u32::from(segment) << LINE_BITS | line)
}

/// The segment and direct entry of slot `slot`.
#[inline(always)]
pub(super) fn unpack(slot: u32) -> (u32, u32) {
    (
        slot >> LINE_BITS & SEGMENT_MASK,
        slot & (LEAF_ENTRY | LINE_MASK),
    )
}

/// The bits of a slot that hold its segment number, in place: a walk asking whether a slot
/// is in a segment compares them with the segment's [`segment_field`], and the rest of the
/// slot is the direct entry.
pub(super) const SEGMENT_FIELD: u32 = SEGMENT_MASK << LINE_BITS;

/// Segment `seg`'s number where a slot holds it ([`SEGMENT_FIELD`]).
pub(super) fn segment_field(seg: u32) -> u32 {
    seg << LINE_BITS & SEGMENT_FIELD
}

/// The slots ([`pack`]) of [`PAGE_CHUNKS`] consecutive chunks.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(super) struct Page {
    pub slots: [u32; PAGE_CHUNKS],
}

/// Where chunk `chunk` is: its page and its place in it.
#[inline(always)]
pub(super) fn place(chunk: usize) -> (usize, usize) {
    (chunk >> PAGE_BITS, chunk & (PAGE_CHUNKS - 1))
}

/// Every chunk's entry and segment, page by page; empty for a one-segment tree.
#[derive(Clone, Debug, Default)]
pub(super) struct Pages(Box<[Arc<Page>]>);

impl Pages {
    /// The pages of flat tables: `direct` (one entry per chunk) and `segment_of` (one
    /// segment per chunk, or empty: every chunk in segment 0); `None` when an entry's line
    /// or a segment number does not fit a slot. Panics unless `direct` has an entry per
    /// chunk and `segment_of` is empty or the same length (callers check).
    pub fn from_flat(direct: &[u32], segment_of: &[u16]) -> Option<Self> {
        assert_eq!(direct.len(), PAGES * PAGE_CHUNKS, "an entry per chunk");
        assert!(segment_of.is_empty() || segment_of.len() == direct.len());
        let segment = |chunk: usize| segment_of.get(chunk).copied().unwrap_or(0);
        let pages = (0..PAGES)
            .map(|p| {
                let mut page = Page {
                    slots: [0; PAGE_CHUNKS],
                };
                for (at, slot) in page.slots.iter_mut().enumerate() {
                    let chunk = p * PAGE_CHUNKS + at;
                    *slot = pack(direct[chunk], segment(chunk))?;
                }
                Some(Arc::new(page))
            })
            .collect::<Option<_>>()?;
        Some(Pages(pages))
    }

    /// True for a one-segment tree's (no pages).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The pages, for the walk.
    #[inline(always)]
    pub fn pages(&self) -> &[Arc<Page>] {
        &self.0
    }

    /// The segment and direct entry of `chunk` (checked), from one read of its slot.
    pub fn chunk(&self, chunk: usize) -> (usize, u32) {
        let (page, at) = place(chunk);
        let (segment, entry) = unpack(self.0[page].slots[at]);
        (segment as usize, entry)
    }

    /// Points `chunk` at `entry` of `segment`, copying its page first when another version
    /// shares it (checked); `None`, with nothing changed, when they do not fit a slot.
    #[must_use]
    pub fn set(&mut self, chunk: usize, entry: u32, segment: u16) -> Option<()> {
        let slot = pack(entry, segment)?;
        let (page, at) = place(chunk);
        Arc::make_mut(&mut self.0[page]).slots[at] = slot;
        Some(())
    }

    /// Every chunk's segment and direct entry, in chunk order.
    pub fn chunks(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.0.iter().flat_map(|p| p.slots).map(|slot| {
            let (segment, entry) = unpack(slot);
            (segment as usize, entry)
        })
    }

    /// Every chunk's entry, in chunk order.
    pub fn entries(&self) -> Vec<u32> {
        self.chunks().map(|(_, entry)| entry).collect()
    }

    /// Every chunk's segment, in chunk order, as the saved format's 16-bit table holds them
    /// (a slot's segment has [`SEGMENT_BITS`] bits, so every number fits).
    pub fn segments(&self) -> Vec<u16> {
        self.chunks().map(|(segment, _)| segment as u16).collect()
    }

    /// Bytes of the slots (entries and segment numbers together).
    pub fn bytes(&self) -> usize {
        self.0.len() * size_of::<Page>()
    }

    /// Pages shared with `other` (the same memory), for tests and statistics.
    #[cfg(test)]
    pub fn shared_with(&self, other: &Pages) -> usize {
        self.0
            .iter()
            .zip(other.0.iter())
            .filter(|(a, b)| Arc::ptr_eq(a, b))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_hold_entry_flag_line_and_segment_or_refuse_them() {
        for (entry, segment) in [
            (0, 0),
            (LINE_MASK, 0),
            (LEAF_ENTRY | 7, 1023),
            (LEAF_ENTRY | LINE_MASK, 512),
        ] {
            let slot = pack(entry, segment).unwrap();
            assert_eq!(
                unpack(slot),
                (u32::from(segment), entry),
                "{entry:#x} {segment}"
            );
        }
        assert_eq!(pack(LINE_MASK + 1, 0), None, "a line of 2^21");
        assert_eq!(pack(LEAF_ENTRY | (LINE_MASK + 1), 3), None);
        assert_eq!(pack(5, MAX_SEGMENTS as u16), None, "segment 1024");
    }

    #[test]
    fn pages_from_flat_tables_give_them_back_or_refuse_what_does_not_fit() {
        let chunks = PAGES * PAGE_CHUNKS;
        let direct: Vec<u32> = (0..chunks as u32).map(|c| c * 31 % (1 << 20)).collect();
        let segment_of: Vec<u16> = (0..chunks).map(|c| (c % 1000) as u16).collect();
        let mut pages = Pages::from_flat(&direct, &segment_of).unwrap();
        assert_eq!(pages.entries(), direct);
        assert_eq!(pages.segments(), segment_of);
        let before = pages.clone();
        assert_eq!(pages.set(70_000 % chunks, 1 << 21, 1), None);
        assert_eq!(pages.set(5, 9, 1024), None);
        assert_eq!(
            pages.shared_with(&before),
            PAGES,
            "a refused set copies no page"
        );
        pages.set(5, LEAF_ENTRY | 9, 3).unwrap();
        assert_eq!(pages.chunk(5), (3, LEAF_ENTRY | 9));
        assert_eq!(pages.shared_with(&before), PAGES - 1);
        let mut wide = direct.clone();
        wide[chunks - 1] = 1 << 21;
        assert!(Pages::from_flat(&wide, &segment_of).is_none());
        assert_eq!(
            Pages::from_flat(&direct, &[]).unwrap().segments(),
            vec![0; chunks]
        );
    }
}
