//! The container of a saved table: a fixed header, a section table, and the sections (flat
//! arrays of plain data, each starting on a 64-byte boundary so that a mapped file's arrays
//! are aligned for the cache-line nodes that are used in place).
//!
//! ```text
//! offset  size  field
//!      0     8  magic            MAGIC
//!      8     4  format version   VERSION
//!     12     4  byte-order mark  0x0102_0304 written in the writer's byte order
//!     16    16  engine name      ASCII, NUL-padded
//!     32     4  sections         number of section-table entries
//!     36     4  reserved         0
//!     40     8  body length      file length - 64
//!     48     8  body checksum    CRC-32 (IEEE) of the body, in the low 32 bits
//!     56     8  reserved         0
//!     64  32*n  section table    per section: tag, family, index, element size (u32 each),
//!                                byte offset from the file start, element count (u64 each)
//!      …        sections         each at a multiple of 64, zero padding between them
//! ```
//!
//! Every number is in the writer's byte order; a reader of the other order refuses the file
//! ([`OpenError::ByteOrder`]) rather than swapping: the arrays are used in place, so they
//! must already be in the reader's order. Which sections a table has, and what they mean, is
//! the engine's business ([`crate::engine::planb`]) and the route list's ([`crate::fib`]).

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::Arc;

use crate::error::OpenError;
use crate::storage::{as_bytes, Array, Backing, Pod, ViewError};

/// The first bytes of every saved table. The first byte is not ASCII and the sequence
/// contains `\r\n` and `\0`, so a text table can never start with it (PNG's trick).
pub const MAGIC: [u8; 8] = *b"\x89IPFIB\r\n";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;
/// Written in the writer's byte order; read back as itself only in the same order.
const BYTE_ORDER_MARK: u32 = 0x0102_0304;
/// Bytes of the fixed header.
pub const HEADER_LEN: usize = 64;
/// Bytes of one section-table entry.
const ENTRY_LEN: usize = 32;
/// Alignment of every section (a cache line, the alignment of PlanB's nodes).
const ALIGN: usize = 64;

/// Which array a section holds: the kind, the family (4 or 6, 0 for none) and an index (a
/// segment number where a family has several of a kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SectionId {
    /// What the section is (each owner defines its tags).
    pub tag: u32,
    /// 4, 6, or 0.
    pub family: u32,
    /// Segment number, or 0.
    pub index: u32,
}

impl std::fmt::Display for SectionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "section {} of family {} (index {})",
            self.tag, self.family, self.index
        )
    }
}

/// Collects sections, then writes the file.
pub struct Writer<'a> {
    engine: &'static str,
    sections: Vec<(SectionId, u32, Cow<'a, [u8]>)>,
}

impl<'a> Writer<'a> {
    /// A file of `engine`'s structure.
    pub fn new(engine: &'static str) -> Self {
        Writer {
            engine,
            sections: Vec::new(),
        }
    }

    /// Adds an array borrowed from the structure.
    pub fn array<T: Pod>(&mut self, id: SectionId, data: &'a [T]) {
        self.sections.push((
            id,
            std::mem::size_of::<T>() as u32,
            Cow::Borrowed(as_bytes(data)),
        ));
    }

    /// Adds an array made for the file.
    pub fn owned<T: Pod>(&mut self, id: SectionId, data: Vec<T>) {
        let bytes = as_bytes(&data).to_vec();
        self.sections
            .push((id, std::mem::size_of::<T>() as u32, Cow::Owned(bytes)));
    }

    /// Writes header, section table and sections (the checksum is computed in a first pass
    /// over the same bytes, so nothing is buffered).
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let table_end = HEADER_LEN + ENTRY_LEN * self.sections.len();
        let mut offsets = Vec::with_capacity(self.sections.len());
        let mut at = table_end.next_multiple_of(ALIGN);
        for (_, _, bytes) in &self.sections {
            offsets.push(at);
            at = (at + bytes.len()).next_multiple_of(ALIGN);
        }
        let file_len = at;

        let mut table = Vec::with_capacity(table_end - HEADER_LEN);
        for ((id, size, bytes), &offset) in self.sections.iter().zip(&offsets) {
            for w in [id.tag, id.family, id.index, *size] {
                table.extend_from_slice(&w.to_ne_bytes());
            }
            table.extend_from_slice(&(offset as u64).to_ne_bytes());
            table.extend_from_slice(&((bytes.len() / *size as usize) as u64).to_ne_bytes());
        }

        // The body in order: section table, padding, each section and its padding.
        let zeros = [0u8; ALIGN];
        let mut crc = crc32fast::Hasher::new();
        self.body(&table, &offsets, table_end, &zeros, |b| {
            crc.update(b);
            Ok(())
        })?;

        let mut header = Vec::with_capacity(HEADER_LEN);
        header.extend_from_slice(&MAGIC);
        header.extend_from_slice(&VERSION.to_ne_bytes());
        header.extend_from_slice(&BYTE_ORDER_MARK.to_ne_bytes());
        let mut name = [0u8; 16];
        name[..self.engine.len()].copy_from_slice(self.engine.as_bytes());
        header.extend_from_slice(&name);
        header.extend_from_slice(&(self.sections.len() as u32).to_ne_bytes());
        header.extend_from_slice(&0u32.to_ne_bytes());
        header.extend_from_slice(&((file_len - HEADER_LEN) as u64).to_ne_bytes());
        header.extend_from_slice(&u64::from(crc.finalize()).to_ne_bytes());
        header.extend_from_slice(&0u64.to_ne_bytes());
        debug_assert_eq!(header.len(), HEADER_LEN);

        out.write_all(&header)?;
        self.body(&table, &offsets, table_end, &zeros, |b| out.write_all(b))
    }

    fn body(
        &self,
        table: &[u8],
        offsets: &[usize],
        table_end: usize,
        zeros: &[u8; ALIGN],
        mut emit: impl FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        emit(table)?;
        let mut at = table_end;
        for ((_, _, bytes), &offset) in self.sections.iter().zip(offsets) {
            emit(&zeros[..offset - at])?;
            emit(bytes)?;
            at = offset + bytes.len();
        }
        emit(&zeros[..at.next_multiple_of(ALIGN) - at])
    }
}

/// One entry of the section table, checked against the file's length.
#[derive(Clone, Copy, Debug)]
struct Entry {
    id: SectionId,
    size: u32,
    offset: usize,
    count: usize,
}

/// A saved table's bytes whose header, checksum and section table have been checked.
pub struct Reader {
    backing: Arc<Backing>,
    engine: String,
    entries: Vec<Entry>,
    /// Per entry: has it been read (see [`Reader::check_all_used`]).
    used: RefCell<Vec<bool>>,
    /// Where each section's entry is.
    index: HashMap<SectionId, usize>,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_ne_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Checks the fixed header at the start of `head` (at least [`HEADER_LEN`] bytes of a file,
/// or the whole file if shorter): magic, version, byte order, reserved fields. Returns the
/// body length it declares.
pub fn check_fixed_header(head: &[u8]) -> Result<u64, OpenError> {
    if !head.starts_with(&MAGIC) {
        return Err(OpenError::NotSaved);
    }
    if head.len() < HEADER_LEN {
        return Err(OpenError::Truncated {
            what: "header".into(),
        });
    }
    let version = u32_at(head, 8);
    if version != VERSION {
        return Err(OpenError::Version {
            found: version,
            supported: VERSION,
        });
    }
    if u32_at(head, 12) != BYTE_ORDER_MARK {
        return Err(OpenError::ByteOrder);
    }
    if u32_at(head, 36) != 0 || u64_at(head, 56) != 0 {
        return Err(OpenError::Format(
            "reserved header fields are not zero".into(),
        ));
    }
    Ok(u64_at(head, 40))
}

/// Checks the header of `bytes` (the whole file): magic, version, byte order, length. Cheap,
/// so a copy can be refused before it is made.
pub fn check_header(bytes: &[u8]) -> Result<(), OpenError> {
    let body = check_fixed_header(bytes)?;
    if body != (bytes.len() - HEADER_LEN) as u64 {
        return Err(if body > (bytes.len() - HEADER_LEN) as u64 {
            OpenError::Truncated {
                what: format!(
                    "body ({body} bytes expected, {} present)",
                    bytes.len() - HEADER_LEN
                ),
            }
        } else {
            OpenError::Format(format!(
                "the header says {body} body bytes, the file has {}",
                bytes.len() - HEADER_LEN
            ))
        });
    }
    Ok(())
}

impl Reader {
    /// Checks everything about the container (not the engine's arrays: see the engine).
    pub fn new(backing: Arc<Backing>) -> Result<Reader, OpenError> {
        let bytes = backing.bytes();
        check_header(bytes)?;
        let stored = u64_at(bytes, 48);
        let computed = u64::from(crc32fast::hash(&bytes[HEADER_LEN..]));
        if stored != computed {
            return Err(OpenError::Checksum { stored, computed });
        }
        let name = &bytes[16..32];
        let name_len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        let engine = std::str::from_utf8(&name[..name_len])
            .ok()
            .filter(|n| {
                n.bytes().all(|b| b.is_ascii_graphic()) && name[name_len..].iter().all(|&b| b == 0)
            })
            .ok_or_else(|| OpenError::Format("the engine name is not NUL-padded ASCII".into()))?
            .to_string();
        let count = u32_at(bytes, 32) as usize;
        let table_end = count
            .checked_mul(ENTRY_LEN)
            .and_then(|n| n.checked_add(HEADER_LEN))
            .filter(|&end| end <= bytes.len())
            .ok_or_else(|| OpenError::Truncated {
                what: format!("section table ({count} entries)"),
            })?;
        let mut entries = Vec::with_capacity(count);
        // Entries found by hashing (duplicates here, sections in `array`): a hostile file may
        // have hundreds of thousands of entries, and a scan per entry would take minutes.
        let mut index = HashMap::with_capacity(count);
        for i in 0..count {
            let at = HEADER_LEN + i * ENTRY_LEN;
            let id = SectionId {
                tag: u32_at(bytes, at),
                family: u32_at(bytes, at + 4),
                index: u32_at(bytes, at + 8),
            };
            if index.insert(id, i).is_some() {
                return Err(OpenError::Format(format!("{id} appears twice")));
            }
            let size = u32_at(bytes, at + 12);
            let offset = u64_at(bytes, at + 16);
            let count = u64_at(bytes, at + 24);
            let len = u64::from(size).checked_mul(count);
            let fits = len
                .and_then(|l| l.checked_add(offset))
                .is_some_and(|end| end <= bytes.len() as u64);
            if !fits || offset < table_end as u64 || !offset.is_multiple_of(ALIGN as u64) {
                return Err(OpenError::Format(format!(
                    "{id} ({count} elements of {size} bytes at offset {offset}) is misplaced \
                     in a file of {} bytes",
                    bytes.len()
                )));
            }
            entries.push(Entry {
                id,
                size,
                // Both fit in the file's length, a usize.
                offset: offset as usize,
                count: count as usize,
            });
        }
        Ok(Reader {
            backing,
            engine,
            used: RefCell::new(vec![false; entries.len()]),
            entries,
            index,
        })
    }

    /// The engine name in the header.
    pub fn engine(&self) -> &str {
        &self.engine
    }

    /// True when the bytes are the mapped file.
    pub fn is_mapped(&self) -> bool {
        self.backing.is_mapped()
    }

    /// Number of sections of `family` with `tag` (segments, say).
    pub fn count(&self, tag: u32, family: u32) -> usize {
        self.entries
            .iter()
            .filter(|e| e.id.tag == tag && e.id.family == family)
            .count()
    }

    /// The section `id` as an array of `T`, in place.
    pub fn array<T: Pod>(&self, id: SectionId) -> Result<Array<T>, OpenError> {
        let i = *self
            .index
            .get(&id)
            .ok_or_else(|| OpenError::Format(format!("{id} is missing")))?;
        self.used.borrow_mut()[i] = true;
        let e = &self.entries[i];
        if e.size as usize != std::mem::size_of::<T>() {
            return Err(OpenError::Format(format!(
                "{id} has elements of {} bytes, expected {}",
                e.size,
                std::mem::size_of::<T>()
            )));
        }
        Array::view(&self.backing, e.offset, e.count).map_err(|v| {
            OpenError::Format(match v {
                ViewError::OutOfBounds => format!("{id} does not fit in the file"),
                ViewError::Misaligned => format!("{id} is misaligned"),
            })
        })
    }

    /// Fails when a section was never read: a file with sections this build does not know
    /// was written by something else, and is refused rather than half understood.
    pub fn check_all_used(&self) -> Result<(), OpenError> {
        let used = self.used.borrow();
        match self.entries.iter().zip(used.iter()).find(|(_, &u)| !u) {
            Some((e, _)) => Err(OpenError::Format(format!("unknown {}", e.id))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(index: u32) -> SectionId {
        SectionId {
            tag: 9,
            family: 4,
            index,
        }
    }

    fn read(w: &Writer<'_>) -> Result<Reader, OpenError> {
        let mut bytes = Vec::new();
        w.write(&mut bytes).unwrap();
        Reader::new(Arc::new(Backing::copy(&bytes)))
    }

    /// A file of very many sections: every one is found (by hash, so opening it takes time
    /// linear in the entries) and every one counts as used once read.
    #[test]
    fn very_many_sections_are_all_found() {
        let n = 50_000;
        let mut w = Writer::new("planb");
        for i in 0..n {
            w.owned(id(i), vec![i]);
        }
        let r = read(&w).unwrap();
        assert_eq!(r.count(9, 4), n as usize);
        assert!(r.check_all_used().is_err(), "nothing read yet");
        for i in (0..n).rev() {
            let a = r.array::<u32>(id(i)).unwrap();
            assert_eq!(&a[..], [i]);
        }
        r.check_all_used().unwrap();
        assert!(
            r.array::<u32>(id(n)).is_err(),
            "a missing section is an error"
        );
    }

    #[test]
    fn a_section_listed_twice_is_refused() {
        let mut w = Writer::new("planb");
        w.owned(id(1), vec![1u32]);
        w.owned(id(2), vec![2u32]);
        w.owned(id(1), vec![3u32]);
        let err = read(&w).err().expect("refused");
        assert!(err.to_string().contains("appears twice"), "{err}");
    }
}
