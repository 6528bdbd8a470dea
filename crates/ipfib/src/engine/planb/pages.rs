//! The per-chunk tables of a tree with several segments (a live table between compactions):
//! each chunk's direct entry and segment, in pages of [`PAGE_CHUNKS`] chunks that versions
//! share.
//!
//! A partial rebuild changes the entries of a few chunks. With flat tables every version
//! copied both whole (256 KiB of entries, 128 KiB of segment numbers), and every lookup starts
//! in them, so after each publish a reader refilled its cache with the fresh copies from the
//! rebuilder's core: about 1.1 ms of reader time a publish on a 115 K-route table whose walk
//! otherwise stays in the reader's 1 MiB L2 (AMD EPYC Zen 4, BENCHMARKS.md "Session 32").
//! Paged, a version copies only the pages its changes touch (6 KiB each) and shares the rest,
//! cache lines and all, with the version before. A walk reaches an entry through the page's
//! pointer, one more load from a 512-byte table that stays in L1.
//!
//! A tree with one segment (every static table, a live table after settling) keeps its
//! entries in one flat array (`Tree::direct`), which the one-segment walks and the staged
//! batch read directly.

use std::sync::Arc;

use super::layout::DIRECT_BITS;

/// Bits of a chunk number that select its place in a page.
pub(super) const PAGE_BITS: u32 = 10;
/// Chunks per page.
pub(super) const PAGE_CHUNKS: usize = 1 << PAGE_BITS;
/// Pages of a tree: every chunk is in one.
const PAGES: usize = 1 << (DIRECT_BITS - PAGE_BITS);

/// The entries and segments of [`PAGE_CHUNKS`] consecutive chunks.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(super) struct Page {
    /// Each chunk's direct entry (its tree's entry line, maybe `LEAF_ENTRY`).
    pub entries: [u32; PAGE_CHUNKS],
    /// Each chunk's segment.
    pub segments: [u16; PAGE_CHUNKS],
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
    /// segment per chunk, or empty: every chunk in segment 0). Panics unless `direct` has an
    /// entry per chunk and `segment_of` is empty or the same length (callers check).
    pub fn from_flat(direct: &[u32], segment_of: &[u16]) -> Self {
        assert_eq!(direct.len(), PAGES * PAGE_CHUNKS, "an entry per chunk");
        assert!(segment_of.is_empty() || segment_of.len() == direct.len());
        let pages = (0..PAGES)
            .map(|p| {
                let range = p * PAGE_CHUNKS..(p + 1) * PAGE_CHUNKS;
                let mut page = Page {
                    entries: [0; PAGE_CHUNKS],
                    segments: [0; PAGE_CHUNKS],
                };
                page.entries.copy_from_slice(&direct[range.clone()]);
                if !segment_of.is_empty() {
                    page.segments.copy_from_slice(&segment_of[range]);
                }
                Arc::new(page)
            })
            .collect();
        Pages(pages)
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

    /// The direct entry of `chunk` (checked).
    pub fn entry(&self, chunk: usize) -> u32 {
        let (page, at) = place(chunk);
        self.0[page].entries[at]
    }

    /// The segment of `chunk` (checked).
    pub fn segment(&self, chunk: usize) -> u16 {
        let (page, at) = place(chunk);
        self.0[page].segments[at]
    }

    /// Points `chunk` at `entry` of `segment`, copying its page first when another version
    /// shares it (checked).
    pub fn set(&mut self, chunk: usize, entry: u32, segment: u16) {
        let (page, at) = place(chunk);
        let page = Arc::make_mut(&mut self.0[page]);
        page.entries[at] = entry;
        page.segments[at] = segment;
    }

    /// Every chunk's entry, in chunk order.
    pub fn entries(&self) -> Vec<u32> {
        self.0.iter().flat_map(|p| p.entries).collect()
    }

    /// Every chunk's segment, in chunk order.
    pub fn segments(&self) -> Vec<u16> {
        self.0.iter().flat_map(|p| p.segments).collect()
    }

    /// Bytes of the entries and of the segment numbers.
    pub fn bytes(&self) -> (usize, usize) {
        let n = self.0.len() * PAGE_CHUNKS;
        (n * size_of::<u32>(), n * size_of::<u16>())
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
