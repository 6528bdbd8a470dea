//! What DXR's arrays hold: the direct-table entry and the chunk layout, written and read here
//! and nowhere else.
//!
//! **Direct entry** (`u32`, one per chunk of `2^(32 - K)` addresses): bits 0..=1 are the
//! chunk's [`Form`]; bits 2..=31 are, for a resolved chunk, the next-hop index, else the
//! chunk's offset in the range array in 4-byte units (4 GiB of ranges). A chunk that no route
//! splits (one range) is *resolved* in the direct table, as in the paper: the lookup ends
//! after one load.
//!
//! **Chunk** (at `offset * 4` in the range array): a `u32` range count `n`, the `n` range
//! starts (offsets inside the chunk, ascending, the first 0), then the `n` next-hop indices,
//! padded to 4 bytes. This is the paper's encoding split into a starts array and an index
//! array, so that one 64-byte load holds 32 long or 64 short starts for a SIMD compare:
//!
//! | form | start | index | applies when |
//! |---|---|---|---|
//! | short | `u8` (start `>> (24 - K)`) | `u8` | every start is a multiple of `2^(24 - K)` (for D16R: only /24 and shorter prefixes split the chunk, the paper's condition) and every index is below 256 |
//! | long | `u16` | `u16` | every index is below 65,536 (the paper's long form) |
//! | wide | `u16` | `u32` | otherwise: tables with more distinct next hops than 16 bits index (the paper's encoding would refuse them) |
//!
//! The count sits in the chunk rather than the entry so that the entry addresses any array
//! size and a chunk may have any number of ranges; it shares the line of the first starts, so
//! it costs no extra miss. Identical chunks share one copy (the paper's aggregated chunks).
//! Next-hop indices are given most used first, so the short form applies as often as it can.
//!
//! The range array ends with [`TAIL`] zero bytes, so a 64-byte window starting at any start
//! of any chunk lies inside it.

/// Largest offset (4-byte units) or next-hop index an entry holds.
pub const MAX_FIELD: usize = (1 << 30) - 1;
/// Padding after the last chunk, for 64-byte windows.
pub const TAIL: usize = 64;

/// How a chunk is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// 8-bit starts and indices.
    Short = 0,
    /// 16-bit starts and indices.
    Long = 1,
    /// 16-bit starts, 32-bit indices.
    Wide = 2,
    /// No ranges: the entry is the next-hop index.
    Resolved = 3,
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

impl Entry {
    /// A chunk with one range: its next-hop index (at most [`MAX_FIELD`]).
    pub fn resolved(hop: u32) -> Entry {
        debug_assert!(hop as usize <= MAX_FIELD);
        Entry(hop << 2 | Form::Resolved as u32)
    }

    /// A chunk of ranges at `units` (4-byte units, at most [`MAX_FIELD`]) in the range array.
    pub fn chunk(units: usize, form: Form) -> Entry {
        debug_assert!(units <= MAX_FIELD && form != Form::Resolved);
        Entry((units as u32) << 2 | form as u32)
    }

    /// The chunk's form.
    #[inline(always)]
    pub fn form(self) -> Form {
        match self.0 & 3 {
            0 => Form::Short,
            1 => Form::Long,
            2 => Form::Wide,
            _ => Form::Resolved,
        }
    }

    /// True when the entry is the answer (no ranges to search).
    #[inline(always)]
    pub fn is_resolved(self) -> bool {
        self.0 & 3 == Form::Resolved as u32
    }

    /// The next-hop index of a resolved entry.
    #[inline(always)]
    pub fn hop(self) -> u32 {
        self.0 >> 2
    }

    /// Byte offset of the chunk (its count) in the range array.
    #[inline(always)]
    pub fn offset(self) -> usize {
        (self.0 >> 2) as usize * 4
    }
}

/// A chunk's encoded bytes: count, starts, indices, padding.
pub fn encode_chunk(starts: &[u32], hops: &[u32], form: Form) -> Vec<u8> {
    let n = starts.len();
    let (ws, wh) = form.widths();
    let mut out = Vec::with_capacity(4 + (ws + wh) * n + 3);
    out.extend_from_slice(&(n as u32).to_le_bytes());
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
    /// Byte offset of the first start.
    pub at: usize,
    /// Number of ranges.
    pub n: usize,
    /// Its form.
    pub form: Form,
}

impl<'a> Chunk<'a> {
    /// The chunk of entry `e` (not resolved), if its count is inside `bytes`.
    pub fn of(bytes: &'a [u8], e: Entry) -> Option<Self> {
        let n = read(bytes, e.offset(), 4)? as usize;
        Some(Chunk {
            bytes,
            at: e.offset() + 4,
            n,
            form: e.form(),
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
}

/// Checks one chunk: in bounds with the tail, at least two ranges, starts ascending from 0
/// and inside the chunk (`chunk_bits` wide), indices below `hops`.
pub fn check_chunk(
    ranges: &[u8],
    e: Entry,
    chunk_bits: u32,
    shift: u32,
    hops: usize,
) -> Result<(), String> {
    let c = Chunk::of(ranges, e).ok_or("chunk count out of bounds")?;
    if c.n < 2 {
        return Err(format!("a chunk of {} ranges", c.n));
    }
    if c.index_at(c.n).max(c.start_at(c.n - 1) + 64) > ranges.len() {
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
        for form in [Form::Short, Form::Long, Form::Wide] {
            let e = Entry::chunk(MAX_FIELD, form);
            assert!(!e.is_resolved());
            assert_eq!((e.offset(), e.form()), (MAX_FIELD * 4, form));
        }
    }

    #[test]
    fn chunks_round_trip_in_every_form() {
        let starts = [0u32, 3, 200];
        let idx = [1u32, 70_000, 2];
        let mut bytes = encode_chunk(&starts, &idx, Form::Wide);
        assert_eq!(bytes.len(), 4 + 6 * 3 + 2, "padded to 4");
        bytes.extend([0; TAIL]);
        let e = Entry::chunk(0, Form::Wide);
        let c = Chunk::of(&bytes, e).unwrap();
        assert_eq!(c.n, 3);
        assert_eq!((0..3).map(|i| c.index(i).unwrap()).collect::<Vec<_>>(), idx);
        check_chunk(&bytes, e, 16, 8, 70_001).unwrap();
        assert!(
            check_chunk(&bytes, e, 16, 8, 70_000).is_err(),
            "index past the hops"
        );
        assert!(
            check_chunk(&bytes, e, 7, 8, 70_001).is_err(),
            "start 200 past a 7-bit chunk"
        );
        let short = encode_chunk(&[0, 1, 2], &[0, 1, 0], Form::Short);
        assert_eq!(short.len(), 12, "4 + 6 bytes padded to 12");
        let c = Chunk::of(&short, Entry::chunk(0, Form::Short)).unwrap();
        assert_eq!(c.start(2, 8), Some(512));
    }
}
