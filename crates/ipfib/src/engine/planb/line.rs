//! The line types: the 64-byte nodes every tree is made of ([`Line32`] for IPv6, [`Line16`]
//! for IPv4), and the [`Segment`] that holds a run of them with the fallback cells their
//! leaves name. What a line's words mean (keys, links, flags, hops) is written and read in
//! one place, `layout`.

use super::fallback::Fallback;
use super::layout::{Family, Key};
use crate::storage::Array;

/// Lines of chunk trees and the fallback cells their leaves name. Links are indices into the
/// segment's own lines, so a segment can be shared by several versions of a table: a table
/// starts as one segment, and a live table's partial rebuild adds a segment with the rebuilt
/// chunks and shares the others (behind `Arc`) with the version before.
#[derive(Debug)]
pub struct Segment<A: Family> {
    /// Inner nodes and leaves; links are indices into this array. Owned, or in place in a
    /// saved table's file.
    pub lines: Array<<A::Key as Key>::Line>,
    /// Cells a leaf position of this segment names with [`CELL`](super::layout::CELL).
    pub fallback: Fallback<A>,
}

impl<A: Family> Segment<A> {
    /// A segment with no lines and no cells: the place of one no chunk uses any more.
    pub fn empty() -> Self {
        Segment {
            lines: Vec::new().into(),
            fallback: Fallback::default(),
        }
    }

    /// True when it has no lines and no cells.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.fallback.cells() == 0
    }
}

/// 64 bytes as sixteen 32-bit words (IPv6 nodes).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line32(pub [u32; 16]);

/// 64 bytes as thirty-two 16-bit halves (IPv4 nodes). Links, flags and hops are 32-bit words
/// stored little-endian in two halves.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line16(pub [u16; 32]);
