//! [`Array`]: the storage of an engine's big flat arrays, either owned on the heap (a table
//! that was built) or a view into a saved file's bytes (a table that was opened), so that
//! opening a saved table maps the file and uses its arrays in place instead of copying them.
//!
//! The lookup path sees neither case: an `Array` is a pointer and a length, and dereferencing
//! it is `slice::from_raw_parts` of the two, with no branch and no dynamic dispatch (the same
//! two loads as a `Box<[T]>`). Whoever owns the memory (the heap allocation or the mapping) is
//! kept alive by a reference count beside them and is never touched by a lookup.
//!
//! This module holds all of the crate's `unsafe` for saved tables: viewing bytes as typed
//! arrays ([`Pod`] says which types may be viewed), viewing typed arrays as bytes (to write
//! them), and mapping a file. It also holds the [`Arena`]: an array with room to grow in
//! place, which a live table's versions view prefixes of.

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::engine::planb::{Line16, Line32};

/// Types whose every bit pattern is a valid value and which have no padding bytes, so a
/// slice of them can be read from (and written as) raw bytes.
///
/// (Public only so that engine traits can name it as a bound; the module is private, so no
/// type outside the crate can implement it.)
///
/// # Safety
/// Implement only for types with no padding, no invalid bit patterns and no pointers.
pub unsafe trait Pod: Copy + Send + Sync + 'static {}

// SAFETY: primitive integers: no padding, every bit pattern valid.
unsafe impl Pod for u8 {}
// SAFETY: as above.
unsafe impl Pod for u16 {}
// SAFETY: as above.
unsafe impl Pod for u32 {}
// SAFETY: as above.
unsafe impl Pod for u64 {}
// SAFETY: as above.
unsafe impl Pod for u128 {}
// SAFETY: `repr(C, align(64))` around `[u32; 16]`, exactly 64 bytes: no padding, and any
// words are a line (the validator decides whether the walk may use it).
unsafe impl Pod for Line32 {}
// SAFETY: `repr(C, align(64))` around `[u16; 32]`, exactly 64 bytes: as above.
unsafe impl Pod for Line16 {}

/// The bytes of a slice of plain data (for writing a saved table).
pub(crate) fn as_bytes<T: Pod>(s: &[T]) -> &[u8] {
    // SAFETY: `T: Pod` has no padding, so every byte of the slice is initialised; the byte
    // slice covers exactly the same memory and lives as long as `s`.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// Bytes a saved table is read from: a read-only mapping of the file, or a 64-byte aligned
/// heap copy (for `from_bytes` and for files that cannot be mapped).
pub(crate) struct Backing {
    kind: BackingKind,
}

enum BackingKind {
    Map(memmap2::Mmap),
    /// 64-byte aligned blocks holding `len` bytes.
    Heap(Box<[Block]>, usize),
}

/// The unit of a heap backing: makes its start 64-byte aligned like a page.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Block([u8; 64]);

impl Backing {
    /// Maps `file` read-only.
    ///
    /// # Safety
    /// The file must not be truncated or written to while the backing (or any array viewing
    /// it) lives: a truncated page faults with `SIGBUS` when read, and rewritten bytes are
    /// read unchecked. Replacing the file by renaming a new one over it (as `Fib::save` does)
    /// is safe: the mapping keeps the old, unlinked file.
    pub(crate) unsafe fn map(file: &File) -> std::io::Result<Backing> {
        // SAFETY: memmap2's contract (the file is not modified while mapped) is this
        // function's own, passed on to the caller.
        // Populated up front: opening reads every byte anyway (the checksum), and one populating
        // call costs less than a page fault per 4 KiB.
        let map = unsafe { memmap2::MmapOptions::new().populate().map(file)? };
        Ok(Backing {
            kind: BackingKind::Map(map),
        })
    }

    /// An aligned copy of `bytes`.
    pub(crate) fn copy(bytes: &[u8]) -> Backing {
        let mut blocks = vec![Block([0; 64]); bytes.len().div_ceil(64)].into_boxed_slice();
        for (block, chunk) in blocks.iter_mut().zip(bytes.chunks(64)) {
            block.0[..chunk.len()].copy_from_slice(chunk);
        }
        Backing {
            kind: BackingKind::Heap(blocks, bytes.len()),
        }
    }

    /// `head` followed by exactly `len - head.len()` bytes read from `input`, in aligned memory
    /// reserved once (no intermediate copy, no reallocation). The reservation is fallible: a
    /// length the process cannot hold is an [`std::io::ErrorKind::OutOfMemory`] error naming
    /// the size, never an abort. Memory is filled a chunk at a time as bytes arrive, so a
    /// stream whose header claims more than it holds ends in
    /// [`std::io::ErrorKind::UnexpectedEof`] having touched no more than it delivered.
    pub(crate) fn read(head: &[u8], input: &mut dyn Read, len: usize) -> std::io::Result<Backing> {
        const CHUNK: usize = 1 << 20;
        let mut blocks: Vec<Block> = Vec::new();
        blocks.try_reserve_exact(len.div_ceil(64)).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                format!("cannot allocate {len} bytes for the saved table"),
            )
        })?;
        let mut filled = 0;
        while filled < len {
            let end = (filled + CHUNK).min(len);
            blocks.resize(end.div_ceil(64), Block([0; 64]));
            // SAFETY: the blocks are initialised 64-byte arrays, at least `end` bytes in one
            // allocation, borrowed mutably and exclusively for the slice's lifetime.
            let bytes =
                unsafe { std::slice::from_raw_parts_mut(blocks.as_mut_ptr().cast::<u8>(), end) };
            let mut from = filled;
            if let Some(rest) = head.get(filled..) {
                let n = rest.len().min(end - filled);
                bytes[filled..filled + n].copy_from_slice(&rest[..n]);
                from += n;
            }
            input.read_exact(&mut bytes[from..])?;
            filled = end;
        }
        Ok(Backing {
            kind: BackingKind::Heap(blocks.into_boxed_slice(), len),
        })
    }

    /// The bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        match &self.kind {
            BackingKind::Map(m) => m,
            // SAFETY: the blocks are `len.div_ceil(64)` initialised 64-byte arrays, so their
            // first `len` bytes are initialised and in one allocation.
            BackingKind::Heap(blocks, len) => unsafe {
                std::slice::from_raw_parts(blocks.as_ptr().cast::<u8>(), *len)
            },
        }
    }

    /// True when the bytes are a mapping of the file (not a copy).
    pub(crate) fn is_mapped(&self) -> bool {
        matches!(self.kind, BackingKind::Map(_))
    }
}

/// Why bytes cannot be viewed as an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ViewError {
    /// The range does not fit in the bytes.
    OutOfBounds,
    /// The start is not aligned for the element type.
    Misaligned,
}

/// An immutable array, owned or a view into a [`Backing`]; derefs to `&[T]`.
pub struct Array<T: 'static> {
    ptr: NonNull<T>,
    len: usize,
    /// Keeps the memory behind `ptr` alive; never read.
    _owner: Arc<dyn Send + Sync>,
}

// SAFETY: an `Array` is a shared, immutable `[T]` plus an `Arc` to its (Send + Sync) owner:
// sending or sharing it is sending or sharing `&[T]`, which needs `T: Sync`.
unsafe impl<T: Sync> Send for Array<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Array<T> {}

impl<T: Send + Sync + 'static> From<Vec<T>> for Array<T> {
    fn from(v: Vec<T>) -> Self {
        v.into_boxed_slice().into()
    }
}

impl<T: Send + Sync + 'static> From<Box<[T]>> for Array<T> {
    fn from(b: Box<[T]>) -> Self {
        let len = b.len();
        // The heap buffer does not move when the box moves into the `Arc` (for an empty
        // slice the pointer is dangling but aligned, which is all an empty slice needs).
        let ptr = NonNull::new(b.as_ptr().cast_mut()).expect("a box's pointer is non-null");
        Array {
            ptr,
            len,
            _owner: Arc::new(b),
        }
    }
}

impl<T: Pod> Array<T> {
    /// The `count` elements of `T` at byte `offset` of `backing`, in place: an error when
    /// they do not fit or the start is not aligned for `T`.
    pub(crate) fn view(
        backing: &Arc<Backing>,
        offset: usize,
        count: usize,
    ) -> Result<Self, ViewError> {
        let bytes = backing.bytes();
        let size = count
            .checked_mul(std::mem::size_of::<T>())
            .ok_or(ViewError::OutOfBounds)?;
        let end = offset.checked_add(size).ok_or(ViewError::OutOfBounds)?;
        if end > bytes.len() {
            return Err(ViewError::OutOfBounds);
        }
        let start = bytes[offset..].as_ptr();
        if start.align_offset(std::mem::align_of::<T>()) != 0 {
            return Err(ViewError::Misaligned);
        }
        Ok(Array {
            ptr: NonNull::new(start.cast::<T>().cast_mut()).expect("a slice's pointer is non-null"),
            len: count,
            _owner: backing.clone(),
        })
    }
}

/// An append-only buffer of fixed capacity whose [`Array`]s are prefixes of it: each version
/// of a live table views the lines written when it was made, and a later version appends past
/// them in place, so that old and new lines share one base address (PlanB's partial rebuilds,
/// `engine::planb::partial`). The capacity is reserved once and never moves; the room past
/// what was written is only address space until it is written.
pub(crate) struct Arena<T: 'static> {
    ptr: NonNull<T>,
    cap: usize,
    /// Elements written or being written (only grows): no array views past it, and the one
    /// writer that moved it past an array's end owns the elements between.
    claimed: AtomicUsize,
}

// SAFETY: an `Arena` owns a heap buffer of `T`s; the elements below `claimed` are only read
// (through `Array`s, `T: Sync`), and each range above it is written by the one thread that
// claimed it before any array views it. Sending or sharing it is sending or sharing `T`s.
unsafe impl<T: Send + Sync> Send for Arena<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for Arena<T> {}

impl<T: Pod> Arena<T> {
    /// An arena holding `items` with room for `spare` more, and the array of `items`. With
    /// no memory for the room, an arena that is full (appends decline), never an abort.
    pub(crate) fn new(mut items: Vec<T>, spare: usize) -> (Arc<Self>, Array<T>) {
        // The room is reserved, not written: it costs address space until used.
        let _ = items.try_reserve_exact(spare);
        let len = items.len();
        let mut items = std::mem::ManuallyDrop::new(items);
        let ptr = NonNull::new(items.as_mut_ptr()).expect("a vector's pointer is non-null");
        let arena = Arc::new(Arena {
            ptr,
            cap: items.capacity(),
            claimed: AtomicUsize::new(len),
        });
        let array = Array {
            ptr,
            len,
            _owner: arena.clone(),
        };
        (arena, array)
    }

    /// `more` written after the first `after` elements, and the array of the first `after +
    /// more.len()`; `None` (nothing written) when there is no room or something was claimed
    /// past `after` already (another version of the table appended).
    pub(crate) fn append(self: &Arc<Self>, after: usize, more: &[T]) -> Option<Array<T>> {
        let end = after.checked_add(more.len()).filter(|&e| e <= self.cap)?;
        self.claimed
            .compare_exchange(after, end, Ordering::AcqRel, Ordering::Acquire)
            .ok()?;
        // SAFETY: `after..end` is inside the buffer (`end <= cap`) and was claimed just now by
        // this call alone (`claimed` only grows, and it moved from `after`), so no array views
        // it and no other writer writes it; `more` is another allocation. Whoever receives the
        // returned array from another thread receives it through a synchronising handoff (the
        // live table publishes versions with release and loads them with acquire), which
        // orders these writes before its reads.
        unsafe {
            std::ptr::copy_nonoverlapping(more.as_ptr(), self.ptr.as_ptr().add(after), more.len());
        }
        Some(Array {
            ptr: self.ptr,
            len: end,
            _owner: self.clone(),
        })
    }

    /// Elements that can still be appended.
    pub(crate) fn room(&self) -> usize {
        self.cap - self.claimed.load(Ordering::Acquire)
    }
}

impl<T> fmt::Debug for Arena<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Arena")
            .field("capacity", &self.cap)
            .field("claimed", &self.claimed.load(Ordering::Relaxed))
            .finish()
    }
}

impl<T> Drop for Arena<T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `cap` are the allocation of the vector `new` took apart; a length
        // of 0 drops no element (`T: Pod` has no drop glue anyway) and frees the buffer.
        unsafe { drop(Vec::from_raw_parts(self.ptr.as_ptr(), 0, self.cap)) }
    }
}

impl<T> Array<T> {
    /// True when both are the same memory (the same array, not equal contents).
    pub(crate) fn ptr_eq(&self, other: &Self) -> bool {
        self.ptr == other.ptr && self.len == other.len
    }
}

impl<T> Deref for Array<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr..ptr + len` was a live, aligned `[T]` when the array was made (a boxed
        // slice, or a view whose bounds and alignment `view` checked and whose element type
        // is `Pod`, so any bytes are valid values), and `_owner` keeps that memory alive and
        // unchanged (no `&mut` to it exists) for as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Clone for Array<T> {
    /// Another handle to the same memory (no copy).
    fn clone(&self) -> Self {
        Array {
            ptr: self.ptr,
            len: self.len,
            _owner: self._owner.clone(),
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Versions append in place while older arrays keep reading their own prefix; an append
    /// from a stale length or past the room declines and writes nothing (run under Miri by
    /// `scripts/miri.sh`, which checks the writes beside the readers' slices).
    #[test]
    fn arenas_append_past_every_array_and_only_there() {
        let (arena, first) = Arena::new(vec![1u32, 2, 3], 4);
        assert_eq!(&*first, &[1, 2, 3]);
        assert!(arena.room() >= 4);
        let reader = {
            let first = first.clone();
            std::thread::spawn(move || first.iter().sum::<u32>())
        };
        let second = arena.append(3, &[4, 5]).unwrap();
        assert_eq!(&*second, &[1, 2, 3, 4, 5]);
        assert_eq!(reader.join().unwrap(), 6);
        assert_eq!(
            &*first,
            &[1, 2, 3],
            "the older array still ends where it did"
        );
        assert!(arena.append(3, &[9]).is_none(), "appended past 3 already");
        let room = arena.room();
        assert!(arena.append(5, &vec![0; room + 1]).is_none(), "no room");
        assert_eq!(arena.room(), room, "a declined append claims nothing");
        let third = std::thread::spawn({
            let arena = arena.clone();
            move || arena.append(5, &[6]).unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(&*third, &[1, 2, 3, 4, 5, 6]);
        drop((arena, first, second));
        assert_eq!(third[5], 6, "the arrays keep the arena alive");
    }

    #[test]
    fn owned_and_viewed_arrays_read_the_same() {
        let owned: Array<u32> = vec![1u32, 2, 3].into();
        assert_eq!(&*owned, &[1, 2, 3]);
        assert!(owned.ptr_eq(&owned.clone()));
        let empty: Array<u32> = Vec::new().into();
        assert!(empty.is_empty());

        let bytes: Vec<u8> = (0..=255).collect();
        let backing = Arc::new(Backing::copy(&bytes));
        let words = Array::<u32>::view(&backing, 4, 3).unwrap();
        assert_eq!(words[0], u32::from_ne_bytes([4, 5, 6, 7]));
        assert_eq!(words.len(), 3);
        assert_eq!(
            Array::<u32>::view(&backing, 2, 1).unwrap_err(),
            ViewError::Misaligned
        );
        assert_eq!(
            Array::<u32>::view(&backing, 252, 2).unwrap_err(),
            ViewError::OutOfBounds
        );
        assert_eq!(
            Array::<u32>::view(&backing, 0, usize::MAX).unwrap_err(),
            ViewError::OutOfBounds
        );
        let lines = Array::<Line32>::view(&backing, 64, 3).unwrap();
        assert_eq!(lines.len(), 3);
        assert_eq!(
            Array::<Line32>::view(&backing, 64, 4).unwrap_err(),
            ViewError::OutOfBounds
        );
        drop(backing);
        assert_eq!(
            lines[0].0[0],
            u32::from_ne_bytes([64, 65, 66, 67]),
            "the view keeps the bytes alive"
        );
        assert_eq!(
            as_bytes(&[1u16, 2]),
            &[1u16.to_ne_bytes(), 2u16.to_ne_bytes()].concat()[..]
        );
    }
}
