//! The line types: the 64-byte nodes every tree is made of ([`Line32`] for IPv6, [`Line16`]
//! for IPv4), and the [`Segment`] that holds a run of them with the fallback cells their
//! leaves name. What a line's words mean (keys, links, flags, hops) is written and read in
//! one place, `layout`.

use std::sync::Arc;

use super::fallback::Fallback;
use super::layout::{Family, Key};
use crate::storage::{Arena, Array};

/// Lines of chunk trees and the fallback cells their leaves name. Links are indices into the
/// segment's own lines, so a segment can be shared by several versions of a table: a table
/// starts as one segment, and a live table's partial rebuild adds a segment with the rebuilt
/// chunks and shares the others (behind `Arc`) with the version before, or appends the
/// rebuilt chunks to a segment with room ([`Segment::append`]).
#[derive(Debug)]
pub struct Segment<A: Family> {
    /// Inner nodes and leaves; links are indices into this array. Owned, in place in a saved
    /// table's file, or a prefix of an arena with room to append.
    pub lines: Array<<A::Key as Key>::Line>,
    /// Cells a leaf position of this segment names with [`CELL`](super::layout::CELL), shared
    /// with the segments appended from this one without cells (an append with cells makes a
    /// longer list: [`Segment::append`]).
    pub fallback: Arc<Fallback<A>>,
    /// The arena `lines` is a prefix of, when the segment has room to append.
    arena: Option<Arc<Arena<<A::Key as Key>::Line>>>,
}

/// Room a segment made for appends ([`Segment::with_room`]) has at least: 16,384 lines (1 MiB
/// of address space, touched only as lines are appended).
const MIN_ROOM: usize = 1 << 14;

impl<A: Family> Segment<A> {
    /// A segment of `lines` and the cells they name.
    pub fn new(lines: Array<<A::Key as Key>::Line>, fallback: Fallback<A>) -> Self {
        Segment {
            lines,
            fallback: Arc::new(fallback),
            arena: None,
        }
    }

    /// A segment of `lines` with room to append as many again (at least [`MIN_ROOM`]): a
    /// live table's home segment, where partial rebuilds put their chunks until it is full.
    pub fn with_room(lines: Vec<<A::Key as Key>::Line>, fallback: Fallback<A>) -> Self {
        let room = lines.len().max(MIN_ROOM);
        let (arena, lines) = Arena::new(lines, room);
        Segment {
            lines,
            fallback: Arc::new(fallback),
            arena: Some(arena),
        }
    }

    /// This segment with `more` lines after its own (their links already indices of the
    /// longer segment) and `cells` after its cells (the cell numbers in `more` already
    /// numbers of the longer list); `None` when it has no room for them, or another segment
    /// was appended from this one already. Versions that hold this segment keep reading its
    /// lines and cells unchanged.
    pub fn append(&self, more: &[<A::Key as Key>::Line], cells: &Fallback<A>) -> Option<Self> {
        let arena = self.arena.as_ref()?;
        // Cells are few (89 in the 228 K-route IPv6 DFZ table), so a new list is a small copy.
        let fallback = if cells.cells() == 0 {
            self.fallback.clone()
        } else {
            Arc::new(self.fallback.joined(cells)?)
        };
        Some(Segment {
            lines: arena.append(self.lines.len(), more)?,
            fallback,
            arena: Some(arena.clone()),
        })
    }

    /// Lines that can still be appended (0 without an arena).
    pub fn room(&self) -> usize {
        self.arena.as_ref().map_or(0, |a| a.room())
    }

    /// Whether partial rebuilds append to this segment (it was made with room).
    pub fn has_arena(&self) -> bool {
        self.arena.is_some()
    }

    /// This segment's cells with other lines (for the validator's tests).
    #[cfg(test)]
    pub fn with_lines(&self, lines: Array<<A::Key as Key>::Line>) -> Self {
        Segment {
            lines,
            fallback: self.fallback.clone(),
            arena: None,
        }
    }

    /// A segment with no lines and no cells: the place of one no chunk uses any more.
    pub fn empty() -> Self {
        Segment::new(Vec::new().into(), Fallback::default())
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
