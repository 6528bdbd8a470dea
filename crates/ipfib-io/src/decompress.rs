//! Transparent decompression: open a file (or stdin) and get plain bytes back, whatever the
//! compression.
//!
//! The format is recognised by its magic bytes, never by the file name, so a table piped through
//! stdin, a `.txt` that is really gzip, or a `.gz` that was already unpacked all read correctly.
//! Every reader of the crate (text FIBs, MRT dumps) opens its input through
//! [`open_maybe_compressed`].

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};

use bzip2::read::MultiBzDecoder;
use flate2::read::MultiGzDecoder;

use crate::LoadError;

/// Buffer size of the readers returned here: large enough that line parsing, not system calls,
/// dominates the cost of reading a table.
const BUF_SIZE: usize = 256 * 1024;

/// A compression format recognised by its leading bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Not compressed (or not in a format recognised here): the bytes are used as they are.
    None,
    /// gzip (RFC 1952), possibly several members back to back.
    Gzip,
    /// bzip2, possibly several streams back to back.
    Bzip2,
}

impl Compression {
    /// Recognises the format from the first bytes of a stream (at least 4 bytes are needed to
    /// tell bzip2 apart from text that happens to start with `BZh`).
    pub fn detect(head: &[u8]) -> Compression {
        match head {
            [0x1f, 0x8b, ..] => Compression::Gzip,
            [b'B', b'Z', b'h', b'1'..=b'9', ..] => Compression::Bzip2,
            _ => Compression::None,
        }
    }
}

/// The name errors use for standard input.
pub const STDIN_NAME: &str = "stdin";

/// True when `path` means standard input (`-`).
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The path to put in error messages for `path`: `stdin` for `-`, else the path itself.
pub fn display_path(path: &Path) -> PathBuf {
    if is_stdin(path) {
        PathBuf::from(STDIN_NAME)
    } else {
        path.to_path_buf()
    }
}

/// Opens `path` (or standard input when `path` is `-`) and returns a buffered reader of its
/// decompressed bytes; gzip and bzip2 are recognised by their magic bytes.
///
/// Errors name the file. Corruption inside a compressed stream shows up later, as an
/// [`io::Error`] from the returned reader.
pub fn open_maybe_compressed(path: &Path) -> Result<Box<dyn BufRead + Send>, LoadError> {
    let io_err = |source| LoadError::Io {
        path: display_path(path),
        source,
    };
    if is_stdin(path) {
        decompress_reader(io::stdin()).map_err(io_err)
    } else {
        let file = File::open(path).map_err(io_err)?;
        decompress_reader(file).map_err(io_err)
    }
}

/// Wraps any byte stream in the decoder its magic bytes call for, buffered.
///
/// Reads at most four bytes up front to look at the magic; they are put back in front of the
/// stream, so nothing is lost even when the source delivers them in several short reads (pipes).
pub fn decompress_reader<R: Read + Send + 'static>(
    mut inner: R,
) -> io::Result<Box<dyn BufRead + Send>> {
    let mut head = [0u8; 4];
    let mut got = 0;
    while got < head.len() {
        match inner.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let stream = Cursor::new(head[..got].to_vec()).chain(inner);
    Ok(match Compression::detect(&head[..got]) {
        Compression::None => Box::new(BufReader::with_capacity(BUF_SIZE, stream)),
        Compression::Gzip => Box::new(BufReader::with_capacity(
            BUF_SIZE,
            MultiGzDecoder::new(BufReader::with_capacity(BUF_SIZE, stream)),
        )),
        Compression::Bzip2 => Box::new(BufReader::with_capacity(
            BUF_SIZE,
            MultiBzDecoder::new(BufReader::with_capacity(BUF_SIZE, stream)),
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn bzip(data: &[u8]) -> Vec<u8> {
        let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn read_all(bytes: Vec<u8>) -> Vec<u8> {
        let mut out = Vec::new();
        decompress_reader(Cursor::new(bytes))
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn detects_by_magic() {
        assert_eq!(Compression::detect(&[0x1f, 0x8b, 8, 0]), Compression::Gzip);
        assert_eq!(Compression::detect(b"BZh9"), Compression::Bzip2);
        assert_eq!(Compression::detect(b"BZh "), Compression::None);
        assert_eq!(Compression::detect(b"BZh"), Compression::None);
        assert_eq!(Compression::detect(b"10.0"), Compression::None);
        assert_eq!(Compression::detect(b""), Compression::None);
    }

    #[test]
    fn plain_gzip_bzip2_and_empty_read_back() {
        let text = b"10.0.0.0/8 1\n2001:db8::/32 2\n".to_vec();
        assert_eq!(read_all(text.clone()), text);
        assert_eq!(read_all(gzip(&text)), text);
        assert_eq!(read_all(bzip(&text)), text);
        assert_eq!(read_all(Vec::new()), b"");
        assert_eq!(read_all(b"ab".to_vec()), b"ab");
    }

    #[test]
    fn concatenated_gzip_members_are_all_read() {
        let mut two = gzip(b"a\n");
        two.extend(gzip(b"b\n"));
        assert_eq!(read_all(two), b"a\nb\n");
    }

    #[test]
    fn short_reads_do_not_lose_the_magic() {
        let text = b"1.2.3.0/24 5\n";
        let mut out = Vec::new();
        decompress_reader(crate::test_support::Trickle::new(gzip(text)))
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, text);
    }

    #[test]
    fn truncated_gzip_is_an_error_not_a_short_file() {
        let mut gz = gzip(&b"192.0.2.0/24 1\n".repeat(1000));
        gz.truncate(gz.len() / 2);
        let mut out = Vec::new();
        let res = decompress_reader(Cursor::new(gz))
            .unwrap()
            .read_to_end(&mut out);
        assert!(res.is_err());
    }

    /// Real compressed MRT files: the decompressed stream must frame into whole MRT records
    /// (12-byte header with a length) right up to its end, and the first record's time must be
    /// the one the file is named after. A short or garbled stream cannot pass both.
    #[test]
    fn real_gzip_and_bzip2_mrt_files_decompress_whole() {
        let Some(data) = ipfib_testdata::shared_data() else {
            return;
        };
        let files = [
            // (file, unix time of the name's date, records start within this many seconds)
            (
                "mrt/updates/bgpkit-updates.20240914.2230.bz2",
                1_726_353_000,
                900,
            ),
            (
                "mrt/updates/routeviews6.updates.20151009.1230.bz2",
                1_444_393_800,
                900,
            ),
            (
                "mrt/updates/rrc06.updates.20150401.0000.gz",
                1_427_846_400,
                300,
            ),
        ];
        for (name, named_time, window) in files {
            let mut bytes = Vec::new();
            open_maybe_compressed(&data.join(name))
                .unwrap()
                .read_to_end(&mut bytes)
                .unwrap();
            let first = u32::from_be_bytes(bytes[0..4].try_into().unwrap());
            assert!(
                (named_time..named_time + window).contains(&first),
                "{name}: first record at {first}"
            );
            let mut at = 0usize;
            let mut records = 0;
            while at < bytes.len() {
                assert!(at + 12 <= bytes.len(), "{name}: header cut at {at}");
                let len = u32::from_be_bytes(bytes[at + 8..at + 12].try_into().unwrap());
                at += 12 + len as usize;
                records += 1;
            }
            assert_eq!(at, bytes.len(), "{name}: last record runs past the end");
            assert!(records > 10, "{name}: {records} records");
        }
    }

    #[test]
    fn missing_file_names_the_path() {
        let err = open_maybe_compressed(Path::new("/nonexistent/ipfib-table.txt"))
            .err()
            .expect("must fail");
        assert_eq!(err.to_string(), "/nonexistent/ipfib-table.txt");
        let cause = std::error::Error::source(&err).expect("the OS error is the source");
        assert!(cause.to_string().contains("No such file"), "{cause}");
    }
}
