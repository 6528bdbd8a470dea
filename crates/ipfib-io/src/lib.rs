//! # ipfib-io — reading and writing ipfib tables
//!
//! Reading and writing tables and address lists, kept out of the core crate so that a user who
//! only wants lookups does not compile gzip, bzip2 and an MRT parser.
//!
//! [`load_fib`] is the one entry point the CLI uses for `--fib`: it reads the plain text format
//! ([`text`]), an MRT RIB dump ([`mrt`]) or a saved table ([`ipfib::saved`]), transparently
//! decompressed ([`decompress`]). [`open_fib`] goes one step further and returns a built
//! [`Fib`]: a saved table is then used as it is, with no build at all. Every path is opened
//! and read once, front to back, so pipes, FIFOs and `/dev/stdin` work like regular files. The
//! format is decided by the content, never the file name: a decompressed stream that starts with
//! an MRT common header (a type RFC 6396 defines, in bytes text never contains) is MRT,
//! anything else is text.

#![warn(missing_docs)]

pub mod bgp;
#[cfg(feature = "bmp")]
pub mod bmp;
pub mod decompress;
mod error;
pub mod lines;
pub mod mrt;
pub mod replay;
pub mod text;
pub mod updates;

use std::io::{BufRead, Cursor, Read};
use std::path::{Path, PathBuf};

pub use error::LoadError;
pub use mrt::{FileFormat, LoadOptions, LoadReport, PeerChoice, ValueKind};
pub use updates::{read_updates, UpdateKind, UpdateRecord, UpdateReport};

use ipfib::{Fib, Table};

/// Loads a FIB file (or standard input for `-`) of any supported format. Nothing half-built is
/// returned: any error in the file is an error for the whole load, and so is a file without a
/// single route ([`LoadError::Empty`]) unless `options.allow_empty` is set. The other
/// `options` only matter for MRT input.
///
/// The file is opened once and read once, front to back, so a pipe, a FIFO or
/// `/dev/stdin` reads exactly like a regular file.
pub fn load_fib(path: &Path, options: &LoadOptions) -> Result<Table, LoadError> {
    load_fib_with_report(path, options).map(|(fib, _)| fib)
}

/// [`load_fib`], also returning what the load did (format, records, skips, truncation), so a
/// tool can warn about skipped records instead of presenting a shortened table as whole.
pub fn load_fib_with_report(
    path: &Path,
    options: &LoadOptions,
) -> Result<(Table, LoadReport), LoadError> {
    Ok(read_fib(path, options)?.into_routes())
}

/// [`load_fib_with_report`] from any byte stream (plain, gzip or bzip2, recognised by content):
/// bytes in memory, a socket, a pipe. `name` is what errors call the source.
pub fn load_fib_from<R: Read + Send + 'static>(
    input: R,
    name: &Path,
    options: &LoadOptions,
) -> Result<(Table, LoadReport), LoadError> {
    Ok(read_stream(input, name, options)?.into_routes())
}

/// A built table from any FIB file (or standard input for `-`): a saved table is read into
/// memory and used as it is, with no build, when `engine` is `None` or its own engine; any
/// other file is loaded ([`load_fib`]) and built with `engine` (`planb` when `None`). A saved
/// table asked for with another engine is rebuilt from its routes.
///
/// Like [`load_fib`], the path is opened and read once, so pipes and FIFOs work, and the
/// returned table does not depend on the file any more (it may be truncated or rewritten).
pub fn open_fib(
    path: &Path,
    engine: Option<&str>,
    options: &LoadOptions,
) -> Result<Fib, LoadError> {
    read_fib(path, options)?.build(engine)
}

/// What a FIB file held, read once: a saved table (already built), or routes and the report
/// of their load. [`FibFile::build`] makes the table a caller asked for from either.
pub struct FibFile {
    name: PathBuf,
    content: Content,
}

/// The two things a FIB file can hold.
pub enum Content {
    /// A saved table, ready to answer.
    Saved(Fib),
    /// Routes (text or MRT), and what their load did.
    Routes(Table, LoadReport),
}

impl FibFile {
    /// What the load did (for a saved table: its format, nothing skipped).
    pub fn report(&self) -> LoadReport {
        match &self.content {
            Content::Saved(_) => LoadReport::new(FileFormat::Saved),
            Content::Routes(_, report) => report.clone(),
        }
    }

    /// What the file held.
    pub fn into_content(self) -> Content {
        self.content
    }

    /// The routes and the load's report (a saved table's routes are read back from it).
    pub fn into_routes(self) -> (Table, LoadReport) {
        match self.content {
            Content::Saved(fib) => (fib.table(), LoadReport::new(FileFormat::Saved)),
            Content::Routes(table, report) => (table, report),
        }
    }

    /// The table built with `engine` (`None`: a saved table's own engine, else `planb`); a
    /// saved table of that engine is used as it is.
    pub fn build(self, engine: Option<&str>) -> Result<Fib, LoadError> {
        let name = self.name;
        let build = |table: &Table| {
            Fib::build(table, engine.unwrap_or("planb")).map_err(|source| LoadError::Build {
                path: name.clone(),
                source,
            })
        };
        match self.content {
            Content::Saved(fib)
                if engine.is_none_or(|e| e.eq_ignore_ascii_case(fib.engine_name())) =>
            {
                Ok(fib)
            }
            Content::Saved(fib) => build(&fib.table()),
            Content::Routes(table, _) => build(&table),
        }
    }
}

/// Opens `path` once (standard input for `-`) and reads it whole, as whatever its content is.
pub fn read_fib(path: &Path, options: &LoadOptions) -> Result<FibFile, LoadError> {
    read_path(path, options, false)
}

/// [`read_fib`], except that a saved table in a regular file is mapped instead of read (no
/// copy; the pages are shared by every process mapping the file). Anything else (other
/// formats, compressed files, pipes) is read as [`read_fib`] reads it.
///
/// # Safety
/// The contract of [`Fib::open_mapped`]: while the table lives, nobody truncates the file or
/// writes into it (a truncated page kills a lookup with `SIGBUS`; rewritten bytes are read
/// unchecked). Replacing the file by renaming another over it is safe.
pub unsafe fn read_fib_mapped(path: &Path, options: &LoadOptions) -> Result<FibFile, LoadError> {
    read_path(path, options, true)
}

/// The one open of `path` behind [`read_fib`] and [`read_fib_mapped`]; with `map`, a saved
/// table in a regular file is mapped (only `read_fib_mapped`, whose caller took on the
/// mapping's contract, sets it).
fn read_path(path: &Path, options: &LoadOptions, map: bool) -> Result<FibFile, LoadError> {
    use std::os::unix::fs::FileExt;
    let name = decompress::display_path(path);
    if decompress::is_stdin(path) {
        return read_stream(std::io::stdin(), &name, options);
    }
    let io = |source| LoadError::Io {
        path: name.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    if map && file.metadata().map_err(io)?.is_file() {
        let mut head = [0u8; 8];
        // A positioned read: the file offset stays at 0 for the stream read below.
        let got = file.read_at(&mut head, 0).map_err(io)?;
        if ipfib::saved::is_saved(&head[..got]) {
            // SAFETY: `map` is set only by `read_fib_mapped`, whose caller took on the
            // mapping's contract.
            let fib = unsafe { Fib::map_file(&file, path) }.map_err(|source| LoadError::Saved {
                path: name.clone(),
                source,
            })?;
            return non_empty(name, Content::Saved(fib), options);
        }
    }
    read_stream(file, &name, options)
}

/// Reads one stream, front to back, as whatever its (decompressed) content is.
fn read_stream<R: Read + Send + 'static>(
    input: R,
    name: &Path,
    options: &LoadOptions,
) -> Result<FibFile, LoadError> {
    let io = |source| LoadError::Io {
        path: name.to_path_buf(),
        source,
    };
    let input = decompress::decompress_reader(input).map_err(io)?;
    let (head, input) = peek(input, mrt::HEADER_LEN).map_err(io)?;
    let content = if ipfib::saved::is_saved(&head) {
        let fib = Fib::read_from(input).map_err(|source| LoadError::Saved {
            path: name.to_path_buf(),
            source,
        })?;
        Content::Saved(fib)
    } else if mrt::looks_like_mrt(&head) {
        let (table, report) = load_mrt(input, name, options)?;
        Content::Routes(table, report)
    } else {
        let table = text::read_fib_from(input, name)?;
        Content::Routes(table, LoadReport::new(FileFormat::Text))
    };
    non_empty(name.to_path_buf(), content, options)
}

/// The file, unless it has no route and `options` do not allow that.
fn non_empty(name: PathBuf, content: Content, options: &LoadOptions) -> Result<FibFile, LoadError> {
    let empty = match &content {
        Content::Saved(fib) => fib.route_count() == 0,
        Content::Routes(table, _) => table.is_empty(),
    };
    let file = FibFile { name, content };
    if !empty || options.allow_empty {
        return Ok(file);
    }
    Err(LoadError::Empty {
        report: Box::new(file.report()),
        path: file.name,
    })
}

/// The first `n` bytes of a stream (fewer if it is shorter), and the stream from its start: the
/// bytes are put back in front, so this works on pipes too.
pub(crate) fn peek(
    mut input: Box<dyn BufRead + Send>,
    n: usize,
) -> std::io::Result<(Vec<u8>, Box<dyn BufRead + Send>)> {
    let mut head = Vec::with_capacity(n);
    // A decompressor's first buffer may be shorter than `n`: read until `n` bytes or the end.
    (&mut input).take(n as u64).read_to_end(&mut head)?;
    let whole: Box<dyn BufRead + Send> = Box::new(Cursor::new(head.clone()).chain(input));
    Ok((head, whole))
}

#[cfg(feature = "mrt")]
fn load_mrt(
    input: Box<dyn BufRead + Send>,
    path: &Path,
    options: &LoadOptions,
) -> Result<(Table, LoadReport), LoadError> {
    mrt::load_from(input, path, options)
}

#[cfg(not(feature = "mrt"))]
fn load_mrt(
    _input: Box<dyn BufRead + Send>,
    path: &Path,
    _options: &LoadOptions,
) -> Result<(Table, LoadReport), LoadError> {
    Err(LoadError::Record {
        path: path.to_path_buf(),
        offset: 0,
        reason: "this is an MRT file, and this build of ipfib has no MRT support \
                 (cargo feature `mrt`)"
            .into(),
    })
}

/// Test helpers shared by the crate's unit tests.
#[cfg(test)]
mod test_support {
    use std::io::Read;

    /// A source that hands out one byte per read, like a slow pipe.
    pub struct Trickle(Vec<u8>, usize);

    impl Trickle {
        pub fn new(data: Vec<u8>) -> Self {
            Trickle(data, 0)
        }
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.1 >= self.0.len() || buf.is_empty() {
                return Ok(0);
            }
            buf[0] = self.0[self.1];
            self.1 += 1;
            Ok(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peek_puts_the_head_back_even_on_short_reads() {
        let data = b"0123456789abcdef".to_vec();
        let input: Box<dyn BufRead + Send> = Box::new(std::io::BufReader::with_capacity(
            1,
            crate::test_support::Trickle::new(data.clone()),
        ));
        let (head, mut whole) = peek(input, 12).unwrap();
        assert_eq!(head, b"0123456789ab");
        let mut all = Vec::new();
        whole.read_to_end(&mut all).unwrap();
        assert_eq!(all, data);

        let short: Box<dyn BufRead + Send> = Box::new(Cursor::new(b"abc".to_vec()));
        assert_eq!(peek(short, 12).unwrap().0, b"abc");
    }

    /// Without the `mrt` feature an MRT file is a clear error, not a text parse failure.
    #[cfg(not(feature = "mrt"))]
    #[test]
    fn mrt_without_the_feature_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rib.mrt");
        let mut header = 0u32.to_be_bytes().to_vec();
        header.extend([0, 13, 0, 1, 0, 0, 0, 0]);
        std::fs::write(&path, header).unwrap();
        let err = load_fib(&path, &LoadOptions::default()).unwrap_err();
        assert!(err.to_string().contains("no MRT support"), "{err}");
    }
}
