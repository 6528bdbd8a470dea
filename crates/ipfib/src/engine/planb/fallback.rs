//! The second stage for IPv6 cells with boundaries finer than the coarse key.
//!
//! The chunk trees search the top 48 bits of an IPv6 address. A /48 cell in which some interval
//! starts below the cell boundary (a prefix longer than /48, or one ending inside the cell) gets
//! a special answer in the tree that sends the lookup here: a binary search over that cell's
//! full 128-bit interval starts. Real tables have few such cells (89 of 135 K intervals in the
//! 228 K-route DFZ table), so the common path never leaves the 32-bit keys, and every prefix
//! length up to /128 stays exact.

use crate::addr::Address;
use crate::route_table::NextHop;

/// The fine-grained intervals of every cell that needs them.
#[derive(Clone, Debug, Default)]
pub struct Fallback<A: Address> {
    /// Per cell: the range of `starts`/`answers` that belongs to it.
    cells: Vec<(u32, u32)>,
    /// Interval starts; the first of each cell is the cell's first address.
    starts: Vec<A>,
    /// Answer of each interval.
    answers: Vec<Option<NextHop>>,
}

impl<A: Address> Fallback<A> {
    /// Adds a cell from its intervals (`(start, answer)`, ascending, the first at the cell's
    /// first address) and returns its index.
    pub fn push_cell(&mut self, intervals: impl IntoIterator<Item = (A, Option<NextHop>)>) -> u32 {
        let begin = self.starts.len() as u32;
        for (start, answer) in intervals {
            self.starts.push(start);
            self.answers.push(answer);
        }
        self.cells.push((begin, self.starts.len() as u32));
        (self.cells.len() - 1) as u32
    }

    /// Copies cell `cell` of `from` (which must exist) into this stage; returns its index here.
    pub fn copy_cell(&mut self, from: &Fallback<A>, cell: u32) -> u32 {
        let (begin, end) = from.cells[cell as usize];
        let range = begin as usize..end as usize;
        self.push_cell(
            from.starts[range.clone()]
                .iter()
                .copied()
                .zip(from.answers[range].iter().copied()),
        )
    }

    /// This fallback's cells followed by `more`'s, whose numbers are then their own plus
    /// this one's count (a segment's cells with those of the chunks appended to it); `None`
    /// when the intervals would be more than a cell range holds (`u32`).
    pub fn joined(&self, more: &Fallback<A>) -> Option<Fallback<A>> {
        let offset = u32::try_from(self.starts.len()).ok()?;
        u32::try_from(self.starts.len() + more.starts.len()).ok()?;
        let mut cells = Vec::with_capacity(self.cells.len() + more.cells.len());
        cells.extend_from_slice(&self.cells);
        cells.extend(more.cells.iter().map(|&(b, e)| (b + offset, e + offset)));
        Some(Fallback {
            cells,
            starts: [&self.starts[..], &more.starts[..]].concat(),
            answers: [&self.answers[..], &more.answers[..]].concat(),
        })
    }

    /// The answer for `addr` inside cell `cell`.
    #[inline]
    pub fn lookup(&self, cell: u32, addr: A) -> Option<NextHop> {
        let (begin, end) = self.cells[cell as usize];
        let (begin, end) = (begin as usize, end as usize);
        let i = self.starts[begin..end].partition_point(|&s| s <= addr);
        // The cell's first start is its first address, which is <= addr, so i >= 1.
        self.answers[begin + i.max(1) - 1]
    }

    /// Lines a lookup in `cell` reads (a model, see [`super::lines`]): the cell's range, the
    /// lines its binary search probes (at most one per probe, at most the lines the range
    /// spans) and the answer.
    pub fn lines_touched(&self, cell: u32) -> usize {
        let (begin, end) = self.cells[cell as usize];
        let len = (end - begin) as usize;
        let probes = (usize::BITS - len.leading_zeros()) as usize;
        let spanned = (len * std::mem::size_of::<A>()).div_ceil(64);
        2 + probes.min(spanned)
    }

    /// Checks that every cell is a non-empty range of the arrays (what [`Fallback::lookup`]
    /// needs to neither index out of bounds nor panic).
    pub fn check(&self) -> Result<(), String> {
        if self.starts.len() != self.answers.len() {
            return Err(format!(
                "fallback has {} starts but {} answers",
                self.starts.len(),
                self.answers.len()
            ));
        }
        for (i, &(begin, end)) in self.cells.iter().enumerate() {
            if begin >= end || end as usize > self.starts.len() {
                return Err(format!(
                    "fallback cell {i} spans {begin}..{end} of {} intervals",
                    self.starts.len()
                ));
            }
        }
        Ok(())
    }

    /// The arrays (cell ranges, interval starts, answers), for a saved table.
    #[allow(clippy::type_complexity)]
    pub fn parts(&self) -> (&[(u32, u32)], &[A], &[Option<NextHop>]) {
        (&self.cells, &self.starts, &self.answers)
    }

    /// A fallback from its arrays (a saved table's); [`Fallback::check`] says whether it can
    /// be searched.
    pub fn from_parts(
        cells: Vec<(u32, u32)>,
        starts: Vec<A>,
        answers: Vec<Option<NextHop>>,
    ) -> Self {
        Fallback {
            cells,
            starts,
            answers,
        }
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.cells.len()
    }

    /// Bytes used.
    pub fn bytes(&self) -> usize {
        self.cells.len() * 8
            + self.starts.len() * std::mem::size_of::<A>()
            + self.answers.len() * std::mem::size_of::<Option<NextHop>>()
    }
}
