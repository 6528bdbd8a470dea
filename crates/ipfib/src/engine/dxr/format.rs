//! What DXR's arrays hold: the direct-table entry and the chunk layout, written and read here
//! and nowhere else.
//!
//! **Direct entry** (`u32`, one per chunk of `2^(32 - K)` addresses): bit 0 is set when the
//! chunk's starts are 16-bit, bit 1 when the chunk is *resolved*; bits 2..=31 are, for a
//! resolved chunk, the next-hop index, else the chunk's offset in the range array in 4-byte
//! units (4 GiB of ranges). A chunk that no route splits (one range) is resolved in the direct
//! table, as in the paper: its answer needs no other line of the structure.
//!
//! **Chunk** (at `offset * 4` in the range array): a `u32` header (range count `n` in bits
//! 0..=19, the fence count `m` in bits 20..=25, the block size's log `5 + extra` in bits
//! 26..=31: stored rather than derived, to spare the walk the arithmetic),
//! `m = ceil(n / (32 << extra))` *fences* (`u16`: every
//! `32 << extra`-th start, as an offset in the chunk; `extra` is the smallest that makes
//! `m <= 32`, so one window holds them), the `n` range starts (offsets inside the chunk,
//! ascending, the first 0), then the `n` next-hop indices, padded to 4 bytes. A lookup
//! searches the fences (one line, the chunk's first), which names a block of `32 << extra`
//! starts; `extra` halvings bring it to one window of 32 starts (none for chunks of up to
//! 1,024 ranges, every chunk of the real tables here); the window search gives the rank. So a
//! range lookup reads two or three lines at known steps, which the batched walk prefetches a
//! group ahead, instead of a binary search's dependent chain. This is the paper's encoding split into a starts array and an index
//! array, so that one 64-byte load holds 32 starts of either width for a SIMD compare:
//!
//! | form | start | index | applies when |
//! |---|---|---|---|
//! | short | `u8` (start `>> (24 - K)`) | `u8` | every start is a multiple of `2^(24 - K)` (for D16R: only /24 and shorter prefixes split the chunk, the paper's condition) and every index is below 256 |
//! | long | `u16` | `u16` | the table has at most 65,535 next hops (the paper's long form) |
//! | wide | `u16` | `u32` | every chunk of a table with more next hops than 16 bits index (the paper's encoding would refuse it) |
//!
//! Whether a table is wide is fixed per table (the walk is compiled for each), so a lane's
//! only per-chunk format choice is the start width, which the walk makes with selects, not
//! branches. The count sits in the chunk rather than the entry so that the entry addresses
//! any array size and a chunk may have any number of ranges; it shares the line of the first
//! starts. Offset 0 holds a one-range dummy chunk that resolved entries search (and ignore),
//! so every lane of a batch runs the same instructions. Identical chunks share one copy (the
//! paper's aggregated chunks). Next-hop indices are given most used first, so the short form
//! applies as often as it can.
//!
//! The range array ends with [`TAIL`] zero bytes, so a 64-byte window starting at any start
//! of any chunk lies inside it.

/// Largest offset (4-byte units) or next-hop index an entry holds.
pub const MAX_FIELD: usize = (1 << 30) - 1;
/// Padding after the last chunk, for 64-byte windows.
pub const TAIL: usize = 64;
/// Starts a window search covers: 32 of either width (64 bytes of long starts).
pub const WINDOW: usize = 32;
/// The dummy chunk at offset 0: one range, start 0, index 0, and zeros for any index width.
pub const DUMMY: [u8; 16] = [1, 0, 0x10, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

/// The header's count bits.
pub const COUNT_MASK: u32 = (1 << 20) - 1;
/// The header's fence count bits (after shifting by 20).
pub const FENCE_MASK: u32 = (1 << 6) - 1;

/// The smallest `extra` with `ceil(n / (32 << extra)) <= 32`.
pub fn extra_for(n: usize) -> u32 {
    let mut extra = 0;
    while n.div_ceil(WINDOW << extra) > WINDOW {
        extra += 1;
    }
    extra
}

/// How a chunk is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// 8-bit starts and indices.
    Short,
    /// 16-bit starts and indices.
    Long,
    /// 16-bit starts, 32-bit indices (every chunk of a wide table).
    Wide,
    /// No ranges: the entry is the next-hop index.
    Resolved,
}

impl Form {
    /// Bytes of one start and of one index.
    pub fn widths(self) -> (usize, usize) {
        match self {
            Form::Short => (1, 1),
            Form::Long => (2, 2),
            Form::Wide => (2, 4),
            Form::Resolved => (0, 0),
        }
    }
}

/// A direct-table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Entry(pub u32);

const LONG: u32 = 1;
const RESOLVED: u32 = 2;

impl Entry {
    /// A chunk with one range: its next-hop index (at most [`MAX_FIELD`]).
    pub fn resolved(hop: u32) -> Entry {
        debug_assert!(hop as usize <= MAX_FIELD);
        Entry(hop << 2 | RESOLVED)
    }

    /// A chunk of ranges at `units` (4-byte units, at most [`MAX_FIELD`]) in the range array.
    pub fn chunk(units: usize, form: Form) -> Entry {
        debug_assert!(units <= MAX_FIELD && form != Form::Resolved);
        Entry((units as u32) << 2 | u32::from(form != Form::Short))
    }

    /// The chunk's form in a table that is `wide` or not.
    pub fn form(self, wide: bool) -> Form {
        match (self.is_resolved(), self.long(), wide) {
            (true, _, _) => Form::Resolved,
            (false, false, _) => Form::Short,
            (false, true, false) => Form::Long,
            (false, true, true) => Form::Wide,
        }
    }

    /// True when the entry is the answer (no ranges to search).
    #[inline(always)]
    pub fn is_resolved(self) -> bool {
        self.0 & RESOLVED != 0
    }

    /// Whether the chunk's starts are 16-bit.
    #[inline(always)]
    pub fn long(self) -> bool {
        self.0 & LONG != 0
    }

    /// The next-hop index of a resolved entry.
    #[inline(always)]
    pub fn hop(self) -> u32 {
        self.0 >> 2
    }

    /// Byte offset of the chunk (its count) in the range array: the dummy chunk's (0) for a
    /// resolved entry, with a select rather than a branch.
    #[inline(always)]
    pub fn offset(self) -> usize {
        let units = std::hint::select_unpredictable(self.is_resolved(), 0, self.0 >> 2);
        units as usize * 4
    }
}

/// A chunk's encoded bytes: header, fences, starts, indices, padding. `starts` are as stored
/// (short ones scaled down by `shift`); fences are full offsets.
pub fn encode_chunk(starts: &[u32], hops: &[u32], form: Form, shift: u32) -> Vec<u8> {
    let n = starts.len();
    let extra = extra_for(n);
    let (ws, wh) = form.widths();
    let scale = if form == Form::Short { shift } else { 0 };
    let mut out = Vec::with_capacity(4 + 2 * WINDOW + (ws + wh) * n + 3);
    let fences = n.div_ceil(WINDOW << extra) as u32;
    out.extend_from_slice(&(n as u32 | fences << 20 | (5 + extra) << 26).to_le_bytes());
    for s in starts.iter().step_by(WINDOW << extra) {
        out.extend_from_slice(&((s << scale) as u16).to_le_bytes());
    }
    for (vs, w) in [(starts, ws), (hops, wh)] {
        for &v in vs {
            out.extend_from_slice(&v.to_le_bytes()[..w]);
        }
    }
    out.resize(out.len().next_multiple_of(4), 0);
    out
}

/// Reads the little-endian integer of `w` bytes at `at` (checked).
fn read(bytes: &[u8], at: usize, w: usize) -> Option<u32> {
    let mut b = [0u8; 4];
    b[..w].copy_from_slice(bytes.get(at..at + w)?);
    Some(u32::from_le_bytes(b))
}

/// A chunk as the checked paths (validation, the lines model) read it.
pub struct Chunk<'a> {
    bytes: &'a [u8],
    /// Byte offset of the first fence.
    pub fences_at: usize,
    /// Number of fences.
    pub fences: usize,
    /// Halvings a block needs to fit a window.
    pub extra: u32,
    /// Byte offset of the first start.
    pub at: usize,
    /// Number of ranges.
    pub n: usize,
    /// Its form.
    pub form: Form,
}

impl<'a> Chunk<'a> {
    /// The chunk of entry `e` (not resolved) of a table that is `wide` or not, if its count
    /// is inside `bytes`.
    pub fn of(bytes: &'a [u8], e: Entry, wide: bool) -> Option<Self> {
        let header = read(bytes, e.offset(), 4)?;
        let n = (header & COUNT_MASK) as usize;
        let fences = (header >> 20 & FENCE_MASK) as usize;
        let extra = (header >> 26).wrapping_sub(5);
        Some(Chunk {
            bytes,
            fences_at: e.offset() + 4,
            fences,
            extra,
            at: e.offset() + 4 + 2 * fences,
            n,
            form: e.form(wide),
        })
    }

    /// Byte offset of start `i`.
    pub fn start_at(&self, i: usize) -> usize {
        self.at + self.form.widths().0 * i
    }

    /// Byte offset of index `i`.
    pub fn index_at(&self, i: usize) -> usize {
        let (ws, wh) = self.form.widths();
        self.at + ws * self.n + wh * i
    }

    /// Start `i` as an offset inside the chunk (short starts scaled back by `shift`).
    pub fn start(&self, i: usize, shift: u32) -> Option<u32> {
        let v = read(self.bytes, self.start_at(i), self.form.widths().0)?;
        Some(if self.form == Form::Short {
            v << shift
        } else {
            v
        })
    }

    /// Next-hop index `i`.
    pub fn index(&self, i: usize) -> Option<u32> {
        read(self.bytes, self.index_at(i), self.form.widths().1)
    }

    /// Fence `j`.
    pub fn fence(&self, j: usize) -> Option<u32> {
        read(self.bytes, self.fences_at + 2 * j, 2)
    }
}

/// Checks one chunk: in bounds with the tail, at least two ranges, starts ascending from 0
/// and inside the chunk (`chunk_bits` wide), indices below `hops`.
pub fn check_chunk(
    ranges: &[u8],
    e: Entry,
    wide: bool,
    bits: (u32, u32),
    hops: usize,
) -> Result<(), String> {
    let (chunk_bits, shift) = bits;
    let c = Chunk::of(ranges, e, wide).ok_or("chunk count out of bounds")?;
    if c.n < 2 || c.extra != extra_for(c.n) || c.fences != c.n.div_ceil(WINDOW << c.extra) {
        return Err(format!("a chunk of {} ranges, extra {}", c.n, c.extra));
    }
    for j in 0..c.fences {
        if c.fence(j) != c.start(j * (WINDOW << c.extra), shift) {
            return Err(format!(
                "chunk at {}: fence {j} is not its block's start",
                c.at
            ));
        }
    }
    if c.index_at(c.n)
        .max(c.start_at(c.n - 1) + 64)
        .max(c.fences_at + 64)
        > ranges.len()
    {
        return Err(format!(
            "chunk at {} of {} ranges runs past the tail",
            c.at, c.n
        ));
    }
    let mut prev = None;
    for i in 0..c.n {
        let start = c.start(i, shift).ok_or("start out of bounds")?;
        if i == 0 && start != 0 {
            return Err(format!("chunk at {} starts at {start}, not 0", c.at));
        }
        if prev.is_some_and(|p| p >= start) || start >= 1 << chunk_bits {
            return Err(format!(
                "chunk at {}: start {i} out of order or range",
                c.at
            ));
        }
        prev = Some(start);
        if c.index(i).ok_or("index out of bounds")? as usize >= hops {
            return Err(format!("chunk at {}: next-hop index past the table", c.at));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_at_the_field_limits() {
        let e = Entry::resolved(MAX_FIELD as u32);
        assert!(e.is_resolved() && e.hop() as usize == MAX_FIELD);
        assert_eq!(e.offset(), 0, "a resolved entry searches the dummy chunk");
        for (form, wide) in [
            (Form::Short, false),
            (Form::Long, false),
            (Form::Wide, true),
        ] {
            let e = Entry::chunk(MAX_FIELD, form);
            assert!(!e.is_resolved());
            assert_eq!((e.offset(), e.form(wide)), (MAX_FIELD * 4, form));
        }
    }

    #[test]
    fn fences_cover_every_block_with_at_most_a_window_of_them() {
        assert_eq!((extra_for(2), extra_for(1024), extra_for(1025)), (0, 0, 1));
        assert_eq!(extra_for(65_537), 7);
        let starts: Vec<u32> = (0..1500).collect();
        let c = encode_chunk(&starts, &vec![1; 1500], Form::Long, 8);
        let mut bytes = c.clone();
        bytes.extend([0; TAIL]);
        let chunk = Chunk::of(&bytes, Entry::chunk(0, Form::Long), false).unwrap();
        assert_eq!((chunk.n, chunk.extra, chunk.fences), (1500, 1, 24));
        assert_eq!(chunk.fence(1), Some(64));
        check_chunk(&bytes, Entry::chunk(0, Form::Long), false, (16, 8), 2).unwrap();
    }

    #[test]
    fn chunks_round_trip_in_every_form() {
        let starts = [0u32, 3, 200];
        let idx = [1u32, 70_000, 2];
        let mut bytes = encode_chunk(&starts, &idx, Form::Wide, 8);
        assert_eq!(bytes.len(), 4 + 2 + 6 * 3, "one fence");
        bytes.extend([0; TAIL]);
        let e = Entry::chunk(0, Form::Wide);
        let c = Chunk::of(&bytes, e, true).unwrap();
        assert_eq!(c.n, 3);
        assert_eq!((0..3).map(|i| c.index(i).unwrap()).collect::<Vec<_>>(), idx);
        check_chunk(&bytes, e, true, (16, 8), 70_001).unwrap();
        assert!(
            check_chunk(&bytes, e, true, (16, 8), 70_000).is_err(),
            "index past the hops"
        );
        assert!(
            check_chunk(&bytes, e, true, (7, 8), 70_001).is_err(),
            "start 200 past a 7-bit chunk"
        );
        let short = encode_chunk(&[0, 1, 2], &[0, 1, 0], Form::Short, 8);
        assert_eq!(short.len(), 12, "4 + 2 + 6 bytes");
        let c = Chunk::of(&short, Entry::chunk(0, Form::Short), false).unwrap();
        assert_eq!(c.start(2, 8), Some(512));
    }
}
