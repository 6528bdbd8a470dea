//! # ipfib-io — reading and writing ipfib tables
//!
//! Reading and writing tables and address lists, kept out of the core crate so that a user who
//! only wants lookups does not compile gzip, bzip2 and an MRT parser.
//!
//! [`load_fib`] is the one entry point the CLI uses for `--fib`: it reads the plain text format
//! ([`text`]), an MRT RIB dump ([`mrt`]) or a saved table ([`ipfib::saved`]), transparently
//! decompressed ([`decompress`]). [`open_fib`] goes one step further and returns a built
//! [`Fib`]: a saved table is then mapped and used as it is, with no build at all. The
//! format is decided by the content, never the file name: a decompressed stream that starts with
//! an MRT common header (a type RFC 6396 defines, in bytes text never contains) is MRT,
//! anything else is text.

#![warn(missing_docs)]

pub mod bgp;
pub mod decompress;
mod error;
pub mod lines;
pub mod mrt;
pub mod text;
pub mod updates;

use std::io::{BufRead, Cursor, Read};
use std::path::Path;

pub use error::LoadError;
pub use mrt::{FileFormat, LoadOptions, LoadReport, PeerChoice, ValueKind};
pub use updates::{read_updates, UpdateKind, UpdateRecord, UpdateReport};

use ipfib::{Fib, Table};

/// Loads a FIB file (or standard input for `-`) of any supported format. Nothing half-built is
/// returned: any error in the file is an error for the whole load, and so is a file without a
/// single route ([`LoadError::Empty`]) unless `options.allow_empty` is set. The other
/// `options` only matter for MRT input.
pub fn load_fib(path: &Path, options: &LoadOptions) -> Result<Table, LoadError> {
    load_fib_with_report(path, options).map(|(fib, _)| fib)
}

/// [`load_fib`], also returning what the load did (format, records, skips, truncation), so a
/// tool can warn about skipped records instead of presenting a shortened table as whole.
pub fn load_fib_with_report(
    path: &Path,
    options: &LoadOptions,
) -> Result<(Table, LoadReport), LoadError> {
    let input = decompress::open_maybe_compressed(path)?;
    load_decompressed(input, &decompress::display_path(path), options)
}

/// [`load_fib_with_report`] from any byte stream (plain, gzip or bzip2, recognised by content):
/// bytes in memory, a socket, a pipe. `name` is what errors call the source.
pub fn load_fib_from<R: Read + Send + 'static>(
    input: R,
    name: &Path,
    options: &LoadOptions,
) -> Result<(Table, LoadReport), LoadError> {
    let input = decompress::decompress_reader(input).map_err(|source| LoadError::Io {
        path: name.to_path_buf(),
        source,
    })?;
    load_decompressed(input, name, options)
}

/// A built table from any FIB file: a saved table is opened (mapped, no build) when `engine`
/// is `None` or its own engine; any other file is loaded ([`load_fib`]) and built with
/// `engine` (`planb` when `None`). A saved table asked for with another engine is rebuilt
/// from its routes.
pub fn open_fib(
    path: &Path,
    engine: Option<&str>,
    options: &LoadOptions,
) -> Result<Fib, LoadError> {
    let name = decompress::display_path(path);
    if !decompress::is_stdin(path) && starts_saved(path)? {
        let fib = Fib::open(path).map_err(|source| LoadError::Saved {
            path: name.clone(),
            source,
        })?;
        let same = engine.is_none_or(|e| e.eq_ignore_ascii_case(fib.engine_name()));
        if same {
            return Ok(fib);
        }
        let table = fib.table();
        return build(&table, engine.unwrap_or("planb"), name);
    }
    let table = load_fib(path, options)?;
    build(&table, engine.unwrap_or("planb"), name)
}

fn build(table: &Table, engine: &str, path: std::path::PathBuf) -> Result<Fib, LoadError> {
    Fib::build(table, engine).map_err(|source| LoadError::Build { path, source })
}

/// True when the file starts with a saved table's magic bytes (standard input, `-`, never
/// counts: it cannot be mapped).
pub fn is_saved_file(path: &Path) -> Result<bool, LoadError> {
    if decompress::is_stdin(path) {
        return Ok(false);
    }
    starts_saved(path)
}

fn starts_saved(path: &Path) -> Result<bool, LoadError> {
    let mut head = Vec::with_capacity(ipfib::saved::MAGIC.len());
    std::fs::File::open(path)
        .and_then(|f| {
            f.take(ipfib::saved::MAGIC.len() as u64)
                .read_to_end(&mut head)
        })
        .map_err(|source| LoadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(ipfib::saved::is_saved(&head))
}

fn load_decompressed(
    input: Box<dyn BufRead + Send>,
    name: &Path,
    options: &LoadOptions,
) -> Result<(Table, LoadReport), LoadError> {
    let (head, input) = peek(input, mrt::HEADER_LEN).map_err(|source| LoadError::Io {
        path: name.to_path_buf(),
        source,
    })?;
    let (fib, report) = if ipfib::saved::is_saved(&head) {
        (load_saved(input, name)?, LoadReport::new(FileFormat::Saved))
    } else if mrt::looks_like_mrt(&head) {
        load_mrt(input, name, options)?
    } else {
        let fib = text::read_fib_from(input, name)?;
        (fib, LoadReport::new(FileFormat::Text))
    };
    if fib.is_empty() && !options.allow_empty {
        return Err(LoadError::Empty {
            path: name.to_path_buf(),
            report: Box::new(report),
        });
    }
    Ok((fib, report))
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

/// The routes of a saved table read from a stream (copied: a stream cannot be mapped). The
/// header is read first and the stream only as far as the length it declares (and one byte
/// more, to tell a longer stream), so a decompression bomb behind a small header costs no
/// more than the header admits to.
fn load_saved(mut input: Box<dyn BufRead + Send>, name: &Path) -> Result<Table, LoadError> {
    let io = |source| LoadError::Io {
        path: name.to_path_buf(),
        source,
    };
    let saved = |source| LoadError::Saved {
        path: name.to_path_buf(),
        source,
    };
    let mut bytes = Vec::with_capacity(ipfib::saved::SAVED_HEADER_LEN);
    (&mut input)
        .take(ipfib::saved::SAVED_HEADER_LEN as u64)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    let total = Fib::saved_len(&bytes).map_err(saved)?;
    let rest = total - bytes.len() as u64;
    input
        .take(rest.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    let fib = Fib::from_bytes(&bytes).map_err(saved)?;
    Ok(fib.table())
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
