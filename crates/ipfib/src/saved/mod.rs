//! Saved tables: a built [`Fib`] written to a file and opened again in milliseconds, for
//! programs that build a table once and serve lookups from many processes (a control plane
//! feeding workers, a command line called repeatedly, the C library).
//!
//! The file (laid out by the crate-private `format` module) holds both families' engine
//! arrays and route lists behind a versioned header with a checksum of the body.
//! [`Fib::open`] reads the file once into aligned memory and uses the big arrays (PlanB's
//! direct table and nodes) there: opening costs one read, a checksum pass, the validator and
//! the small arrays' copies, not a build. [`Fib::read_from`] does the same from any stream (a
//! pipe, a socket, a decompressor), [`Fib::from_bytes`] from bytes in memory.
//!
//! **Nothing in a file is trusted.** The header, the section table and every array length are
//! checked before use; then the engine's validator checks every invariant its unchecked walk
//! relies on ([`crate::engine::Lookup::validate`]). A damaged or hostile file therefore loads
//! correctly or fails with an [`OpenError`] naming what is wrong; it cannot cause undefined
//! behaviour, a panic, or an allocation larger than the file (the memory for the body is
//! allocated once, fallibly, after the header has been checked: a length the process cannot
//! hold is an error naming it).
//!
//! **A table read into memory does not depend on the file any more**: the file may then be
//! truncated, rewritten or deleted. Mapping the file instead ([`Fib::open_mapped`], an
//! `unsafe fn`) skips the copy but is only as stable as the file: a file truncated while mapped
//! makes the lookups that touch the lost pages die with `SIGBUS`, and bytes rewritten in place
//! are read unchecked. Map only files nobody writes into: [`Fib::save`] writes a new file and
//! renames it over the old one, so a table that is open keeps reading the old (unlinked) file
//! and the next open sees the new one.
//!
//! Only PlanB has a saved format: saving a table built with another engine is
//! [`SaveError::Unsupported`].

pub(crate) mod format;
pub(crate) mod words;

use std::any::Any;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::engine::planb::PlanB;
use crate::engine::{self, BuildOptions, Lookup};
use crate::error::{OpenError, SaveError};
use crate::fib::Fib;
use crate::storage::Backing;
use format::{Reader, Writer};

pub use format::MAGIC;
/// Bytes of a saved table's fixed header (what [`Fib::saved_len`] reads).
pub const SAVED_HEADER_LEN: usize = format::HEADER_LEN;

/// True when `head` (the first bytes of a file, at least 8) starts like a saved table.
pub fn is_saved(head: &[u8]) -> bool {
    head.starts_with(&MAGIC)
}

impl Fib {
    /// Writes the table to `path` in the saved format (see the [module docs](self)): to a
    /// temporary file beside it, then renamed over `path`, so a process that has the old file
    /// open keeps a consistent table. A symlink is written through: the file it points to
    /// (at the end of a chain of links) is replaced, and the link stays ([`write_target`]).
    ///
    /// ```
    /// use ipfib::{Fib, Table};
    ///
    /// let mut t = Table::new();
    /// t.insert("10.0.0.0/8".parse().unwrap(), 1).unwrap();
    /// t.insert("2001:db8::/32".parse().unwrap(), 2).unwrap();
    /// let fib = Fib::build(&t, "planb").unwrap();
    /// let dir = std::env::temp_dir().join(format!("ipfib-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("table.ipfib");
    /// fib.save(&path).unwrap();
    ///
    /// let opened = Fib::open(&path).unwrap();
    /// assert_eq!(opened.lookup("10.1.2.3".parse().unwrap()), Some(1));
    /// assert_eq!(opened.lookup_prefix("2001:db8::1".parse().unwrap()).unwrap().1, 2);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), SaveError> {
        let path = path.as_ref();
        let io = |source| SaveError::Io {
            path: path.to_path_buf(),
            source,
        };
        let writer = self.writer()?;
        let target = write_target(path).map_err(io)?;
        // A new, uniquely named file beside the target (the rename stays on one file system;
        // two saves to one path at once each write their own file), removed if anything fails.
        let mut tmp = temporary_beside(&target).map_err(io)?;
        let mut file = io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        writer.write(&mut file).map_err(io)?;
        file.into_inner()
            .map_err(|e| io(e.into_error()))?
            .sync_all()
            .map_err(io)?;
        tmp.persist(&target).map_err(|e| io(e.error))?;
        Ok(())
    }

    /// Writes the table in the saved format to any writer (a socket, a buffer).
    pub fn write_to(&self, out: &mut impl Write) -> Result<(), SaveError> {
        self.writer()?.write(out).map_err(|source| SaveError::Io {
            path: PathBuf::from("-"),
            source,
        })
    }

    /// Opens a saved table: reads the file once into memory (see the [module docs](self)),
    /// so the table stays valid whatever later happens to the file. Any readable file works:
    /// a regular file, a pipe (`/dev/stdin`, `/dev/fd/N`), a FIFO. Lookups use the fastest
    /// node search this CPU runs.
    pub fn open(path: impl AsRef<Path>) -> Result<Fib, OpenError> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|source| OpenError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        read_stream(file, path)
    }

    /// A saved table read from a stream (a file, a pipe, a socket): the fixed header first,
    /// then exactly the length it declares, so a hostile stream cannot make this hold more
    /// than its header admits to; a stream with bytes after the table is an error.
    pub fn read_from(input: impl Read) -> Result<Fib, OpenError> {
        read_stream(input, Path::new("-"))
    }

    /// Opens a saved table by mapping the file at `path` instead of reading it: no copy, and
    /// pages are shared by every process that maps the same file.
    ///
    /// # Safety
    /// Nobody may truncate the file or write into it while the returned table (or a clone of
    /// its arrays) lives: a lookup that touches a truncated page dies with `SIGBUS`, and
    /// rewritten bytes are read unchecked (wrong answers, reads out of bounds). Replacing the
    /// file by renaming another over it, as [`Fib::save`] does, is safe.
    pub unsafe fn open_mapped(path: impl AsRef<Path>) -> Result<Fib, OpenError> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|source| OpenError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        // SAFETY: the caller's contract, passed on.
        unsafe { Fib::map_file(&file, path) }
    }

    /// [`Fib::open_mapped`] of a file that is already open (`name` is what errors call it).
    ///
    /// # Safety
    /// As for [`Fib::open_mapped`]: the file is not truncated or written into while the table
    /// lives.
    pub unsafe fn map_file(file: &File, name: &Path) -> Result<Fib, OpenError> {
        // SAFETY: the caller's contract, passed on.
        let backing = unsafe { Backing::map(file) }.map_err(|source| OpenError::Io {
            path: name.to_path_buf(),
            source,
        })?;
        Fib::read(Arc::new(backing), &BuildOptions::default())
    }

    /// A saved table from bytes in memory (copied once into aligned memory). Nothing is
    /// allocated before the header has been checked against the length.
    pub fn from_bytes(bytes: &[u8]) -> Result<Fib, OpenError> {
        format::check_header(bytes)?;
        Fib::read(Arc::new(Backing::copy(bytes)), &BuildOptions::default())
    }

    /// The length in bytes of the whole saved table whose first [`SAVED_HEADER_LEN`] bytes are
    /// `head`, as its header declares it (after checking the header's fixed fields). A reader
    /// of a stream (a compressed file, a pipe) reads this much and no more before
    /// [`Fib::from_bytes`], so a hostile stream cannot make it hold more than the header
    /// admits to.
    pub fn saved_len(head: &[u8]) -> Result<u64, OpenError> {
        let body = format::check_fixed_header(head)?;
        body.checked_add(format::HEADER_LEN as u64)
            .ok_or_else(|| OpenError::Format(format!("a body of {body} bytes")))
    }

    /// True when the table's arrays are a mapped file ([`Fib::open_mapped`]).
    pub fn is_mapped(&self) -> bool {
        self.mapped
    }

    fn writer(&self) -> Result<Writer<'_>, SaveError> {
        let unsupported = SaveError::Unsupported {
            engine: self.engine.name(),
        };
        let v4: &dyn Any = self.v4.as_ref();
        let v6: &dyn Any = self.v6.as_ref();
        let (Some(v4), Some(v6)) = (
            v4.downcast_ref::<PlanB<u32>>(),
            v6.downcast_ref::<PlanB<u128>>(),
        ) else {
            return Err(unsupported);
        };
        let mut w = Writer::new(v6.name());
        v4.write_sections(&mut w);
        v6.write_sections(&mut w);
        self.routes_v4.write_sections(&mut w);
        self.routes_v6.write_sections(&mut w);
        Ok(w)
    }

    fn read(backing: Arc<Backing>, options: &BuildOptions) -> Result<Fib, OpenError> {
        let r = Reader::new(backing)?;
        let info = engine::by_name(r.engine())
            .ok()
            .filter(|e| e.name() == "planb")
            .ok_or_else(|| OpenError::Engine(r.engine().to_string()))?;
        let backend = options.resolve_backend()?;
        let fib = Fib {
            engine: info,
            v4: Box::new(PlanB::<u32>::read_sections(&r, backend)?),
            v6: Box::new(PlanB::<u128>::read_sections(&r, backend)?),
            routes_v4: crate::fib::RouteList::read_sections(&r)?,
            routes_v6: crate::fib::RouteList::read_sections(&r)?,
            mapped: r.is_mapped(),
        };
        r.check_all_used()?;
        Ok(fib)
    }
}

/// The file a write to `path` replaces: `path` itself, or, when it is a symbolic link, the
/// file at the end of its chain of links (relative links resolved against their own
/// directory; the file need not exist yet). Writers that replace files by renaming a
/// temporary one into place ([`Fib::save`], `ipfib save` and `ipfib convert`) rename over this
/// path, so a link keeps pointing where it did, as editors and `cp` leave it. A chain of more
/// than 40 links is an error (`ELOOP`'s limit).
pub fn write_target(path: &Path) -> io::Result<PathBuf> {
    let mut target = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&target) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(&target)?;
                target = match target.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            Ok(_) => return Ok(target),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(target),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{}: more than 40 symbolic links in a chain", path.display()),
    ))
}

/// The saved table in `input`: its fixed header, then the body length the header declares,
/// read into memory allocated once; then one more read must find the end of the stream.
fn read_stream(mut input: impl Read, name: &Path) -> Result<Fib, OpenError> {
    let io = |source: io::Error| match source.kind() {
        io::ErrorKind::UnexpectedEof => OpenError::Truncated {
            what: "body (the stream ended before the length its header declares)".into(),
        },
        _ => OpenError::Io {
            path: name.to_path_buf(),
            source,
        },
    };
    let mut head = Vec::with_capacity(format::HEADER_LEN);
    (&mut input)
        .take(format::HEADER_LEN as u64)
        .read_to_end(&mut head)
        .map_err(io)?;
    let total = Fib::saved_len(&head)?;
    let total = usize::try_from(total).map_err(|_| {
        io(io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!("a saved table of {total} bytes does not fit in this address space"),
        ))
    })?;
    let backing = Backing::read(&head, &mut input, total).map_err(io)?;
    let mut extra = [0u8; 1];
    let more = loop {
        match input.read(&mut extra) {
            Ok(n) => break n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
    };
    if more != 0 {
        return Err(OpenError::Format(format!(
            "the header says {} body bytes, and the input goes on after them",
            total - format::HEADER_LEN
        )));
    }
    Fib::read(Arc::new(backing), &BuildOptions::default())
}

/// A new temporary file in `path`'s directory, named after it, created exclusively, with the
/// permissions a plain `File::create` gives (not `tempfile`'s owner-only default: a saved table
/// is opened by other programs).
fn temporary_beside(path: &Path) -> io::Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // `tempfile` wraps its errors (the OS error number is lost, so Python could not raise
    // `FileNotFoundError` for a missing directory): look at the directory first, which gives
    // the plain error for the common failures.
    if !std::fs::metadata(dir)?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("{} is not a directory", dir.display()),
        ));
    }
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(path.file_name().unwrap_or_default());
    prefix.push(".");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}
