//! Reading text one line at a time in bounded memory, whatever the input.
//!
//! [`LineReader`] is what every line-based reader of the crate uses (the FIB text format today;
//! address lists and update streams can use it too). Compared with `BufRead::read_until` it
//!
//! * ends a line at `\n`, `\r\n` **or a lone `\r`** (old Mac and some exporters write bare CR:
//!   read with `\n` only, such a file is one long line);
//! * never holds more than [`MAX_LINE`] bytes of a line (plus the reader's own buffer): a longer
//!   line is a [`LineError::TooLong`] as soon as the limit is passed, so a 200 MB line of
//!   garbage (or a binary file with no line ends) costs no more memory than a short one;
//! * hands out lines that fit in the input buffer without copying them.
//!
//! [`excerpt`] and [`excerpt_str`] are how error messages quote input: a short, escaped excerpt,
//! never a whole line.

use std::io::{self, BufRead};
use std::path::Path;

use memchr::memchr2;

use crate::LoadError;

/// The longest line accepted, in bytes, not counting its line end. A route line is under 60
/// bytes; anything near this is not a table.
pub const MAX_LINE: usize = 4096;

/// At most this many characters (escaped) of input are quoted in an error message.
pub const EXCERPT_CHARS: usize = 40;

/// Why no line could be read.
#[derive(Debug)]
pub enum LineError {
    /// The underlying stream failed (a read error, a damaged compressed file).
    Io(io::Error),
    /// Line [`LineReader::line_number`] is longer than the limit. Nothing past the limit was
    /// kept; reading cannot sensibly go on.
    TooLong {
        /// The limit that was passed.
        limit: usize,
        /// The first bytes of the line (at most [`EXCERPT_CHARS`] of them), for the message.
        head: Vec<u8>,
        /// The part of the line that was read contains NUL bytes: binary data, not text.
        binary: bool,
    },
}

impl LineError {
    /// The error a reader of file `path` returns for this one at line `line` (the reader's
    /// [`LineReader::line_number`]): the stream's own error as an I/O error of the file, any
    /// other as a bad line.
    pub fn into_load_error(self, path: &Path, line: u64) -> LoadError {
        match self {
            LineError::Io(source) => LoadError::Io {
                path: path.to_path_buf(),
                source,
            },
            e => LoadError::Line {
                path: path.to_path_buf(),
                line,
                reason: e.reason(),
            },
        }
    }

    /// A one-line description for error messages (the caller adds file and line).
    pub fn reason(&self) -> String {
        match self {
            LineError::Io(e) => e.to_string(),
            LineError::TooLong {
                limit,
                head,
                binary,
            } => {
                let what = if *binary {
                    " and contains NUL bytes: binary data, not a text file"
                } else {
                    ""
                };
                format!(
                    "line too long: more than {limit} bytes without a line end{what} (starts {}...)",
                    excerpt(head)
                )
            }
        }
    }
}

/// Splits a byte stream into lines (see the module documentation).
pub struct LineReader<R> {
    inner: R,
    /// Position in `inner`'s current buffer of the next line's first byte (the buffer is
    /// consumed only when it has been used up, so most lines are slices of it).
    pos: usize,
    /// The previous line ended with `\r` as the last byte of a buffer: a `\n` at the start of
    /// the next buffer belongs to that line end.
    skip_lf: bool,
    /// A line that spans buffers is assembled here (never more than `max` bytes).
    line: Vec<u8>,
    line_no: u64,
    max: usize,
}

/// Where the line found by one scan of the buffer lies.
enum Found {
    /// `buf[start..end]`, the whole line, inside the current buffer; the next line starts at
    /// `next`.
    InBuffer {
        start: usize,
        end: usize,
        next: usize,
    },
    /// The line is in `self.line`.
    Assembled,
    /// The stream has ended.
    End,
}

impl<R: BufRead> LineReader<R> {
    /// A reader of lines of at most [`MAX_LINE`] bytes.
    pub fn new(inner: R) -> Self {
        Self::with_max(inner, MAX_LINE)
    }

    /// A reader of lines of at most `max` bytes.
    pub fn with_max(inner: R, max: usize) -> Self {
        LineReader {
            inner,
            pos: 0,
            skip_lf: false,
            line: Vec::new(),
            line_no: 0,
            max,
        }
    }

    /// The 1-based number of the line last returned (or being read, after an error).
    pub fn line_number(&self) -> u64 {
        self.line_no
    }

    /// The next line without its line end, or `None` at the end of the stream. A last line
    /// without a line end is still a line; an empty stream has none.
    pub fn next_line(&mut self) -> Result<Option<&[u8]>, LineError> {
        // First find the line without handing out a borrow of the buffer (the search may have
        // to consume buffers), then borrow the buffer again to return it.
        match self.find()? {
            Found::InBuffer { start, end, next } => {
                self.pos = next;
                let buf = self.inner.fill_buf().map_err(LineError::Io)?;
                Ok(Some(&buf[start..end]))
            }
            Found::Assembled => Ok(Some(&self.line)),
            Found::End => Ok(None),
        }
    }

    fn find(&mut self) -> Result<Found, LineError> {
        self.line.clear();
        let mut spanning = false;
        loop {
            let buf = match self.inner.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(LineError::Io(e)),
            };
            if self.pos >= buf.len() {
                // The buffer is used up: hand it back and get the next one.
                let used = buf.len();
                if used > 0 {
                    self.inner.consume(used);
                    self.pos = 0;
                    continue;
                }
                self.skip_lf = false;
                if spanning {
                    self.line_no += 1;
                    return Ok(Found::Assembled);
                }
                return Ok(Found::End);
            }
            if self.skip_lf {
                self.skip_lf = false;
                if buf[self.pos] == b'\n' {
                    self.pos += 1;
                    continue;
                }
            }
            let start = self.pos;
            let rest = &buf[start..];
            match memchr2(b'\n', b'\r', rest) {
                Some(i) => {
                    let end = start + i;
                    let mut next = end + 1;
                    if buf[end] == b'\r' {
                        match buf.get(next) {
                            Some(b'\n') => next += 1,
                            Some(_) => {}
                            None => self.skip_lf = true,
                        }
                    }
                    if !spanning {
                        if i > self.max {
                            self.line_no += 1;
                            return Err(too_long(self.max, &rest[..i]));
                        }
                        self.line_no += 1;
                        return Ok(Found::InBuffer { start, end, next });
                    }
                    if self.line.len() + i > self.max {
                        self.line_no += 1;
                        return Err(too_long_assembled(self.max, &self.line, &rest[..i]));
                    }
                    self.line.extend_from_slice(&rest[..i]);
                    self.pos = next;
                    self.line_no += 1;
                    return Ok(Found::Assembled);
                }
                None => {
                    if self.line.len() + rest.len() > self.max {
                        self.line_no += 1;
                        return Err(too_long_assembled(self.max, &self.line, rest));
                    }
                    self.line.extend_from_slice(rest);
                    spanning = true;
                    let used = buf.len();
                    self.inner.consume(used);
                    self.pos = 0;
                }
            }
        }
    }
}

fn too_long(limit: usize, line: &[u8]) -> LineError {
    let seen = &line[..line.len().min(limit + 1)];
    LineError::TooLong {
        limit,
        head: seen[..seen.len().min(EXCERPT_CHARS)].to_vec(),
        binary: seen.contains(&0),
    }
}

fn too_long_assembled(limit: usize, kept: &[u8], more: &[u8]) -> LineError {
    let mut head = kept[..kept.len().min(EXCERPT_CHARS)].to_vec();
    let room = EXCERPT_CHARS - head.len();
    head.extend_from_slice(&more[..more.len().min(room)]);
    let more = &more[..more.len().min((limit + 1).saturating_sub(kept.len()))];
    LineError::TooLong {
        limit,
        head,
        binary: kept.contains(&0) || more.contains(&0),
    }
}

/// Raw bytes quoted for a message: escaped (`\xNN` for anything that is not printable ASCII),
/// in double quotes, at most [`EXCERPT_CHARS`] characters of escaped text, with `...` when cut.
pub fn excerpt(bytes: &[u8]) -> String {
    quote(bytes.iter().map(|b| b.escape_ascii().to_string()))
}

/// Text quoted for a message: escaped as Rust's `{:?}` escapes it, in double quotes, at most
/// [`EXCERPT_CHARS`] characters of escaped text, with `...` when cut.
pub fn excerpt_str(s: &str) -> String {
    quote(s.chars().map(|c| match c {
        '\'' => "'".to_string(),
        c => c.escape_debug().to_string(),
    }))
}

/// Quotes escaped pieces until the budget is spent.
fn quote(pieces: impl Iterator<Item = String>) -> String {
    let mut out = String::from("\"");
    let mut used = 0;
    for piece in pieces {
        let width = piece.chars().count();
        if used + width > EXCERPT_CHARS {
            out.push_str("\"...");
            return out;
        }
        used += width;
        out.push_str(&piece);
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Cursor, Read};

    /// All lines of `data` read through buffers of `cap` bytes.
    fn lines(data: &[u8], cap: usize) -> Vec<Vec<u8>> {
        let mut r = LineReader::new(BufReader::with_capacity(cap, Cursor::new(data.to_vec())));
        let mut out = Vec::new();
        while let Some(line) = r.next_line().unwrap() {
            out.push(line.to_vec());
        }
        assert_eq!(r.line_number(), out.len() as u64);
        out
    }

    fn strs(v: &[&str]) -> Vec<Vec<u8>> {
        v.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    #[test]
    fn every_line_end_and_every_buffer_size() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("a", &["a"]),
            ("a\n", &["a"]),
            ("a\nb", &["a", "b"]),
            ("a\r\nb\r\n", &["a", "b"]),
            ("a\rb\rc", &["a", "b", "c"]),
            ("a\rb\r", &["a", "b"]),
            ("\n\n", &["", ""]),
            ("\r\r\n\n", &["", "", ""]),
            ("\r\n", &[""]),
            ("\n\r", &["", ""]),
            ("ab\r\r\ncd\n\rx", &["ab", "", "cd", "", "x"]),
            (
                "10.0.0.0/8 1\r10.1.0.0/16 2\r",
                &["10.0.0.0/8 1", "10.1.0.0/16 2"],
            ),
        ];
        for (data, want) in cases {
            for cap in [1, 2, 3, 4, 5, 7, 64, 8192] {
                assert_eq!(
                    lines(data.as_bytes(), cap),
                    strs(want),
                    "{data:?} cap {cap}"
                );
            }
        }
    }

    #[test]
    fn a_line_at_the_limit_passes_and_one_more_byte_fails() {
        for cap in [3, 10, 64, 8192] {
            let ok = [b'x'; 10].to_vec();
            let mut r = LineReader::with_max(BufReader::with_capacity(cap, &ok[..]), 10);
            assert_eq!(r.next_line().unwrap().unwrap(), &ok[..]);
            assert!(r.next_line().unwrap().is_none());

            let mut long = b"ok\n".to_vec();
            long.extend([b'y'; 11]);
            long.extend(b"\nafter\n");
            let mut r = LineReader::with_max(BufReader::with_capacity(cap, &long[..]), 10);
            assert_eq!(r.next_line().unwrap().unwrap(), b"ok");
            match r.next_line() {
                Err(LineError::TooLong {
                    limit,
                    head,
                    binary,
                }) => {
                    assert_eq!((limit, binary), (10, false));
                    assert!(head.iter().all(|&b| b == b'y') && !head.is_empty());
                }
                other => panic!("cap {cap}: {other:?}"),
            }
            assert_eq!(r.line_number(), 2);
        }
    }

    /// A source that produces `n` bytes of `byte` without holding them.
    struct Endless {
        byte: u8,
        left: u64,
        read: u64,
    }
    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = (buf.len() as u64).min(self.left) as usize;
            buf[..n].fill(self.byte);
            self.left -= n as u64;
            self.read += n as u64;
            Ok(n)
        }
    }

    #[test]
    fn a_huge_line_stops_at_the_limit_without_reading_it_all() {
        for byte in [b'x', 0] {
            let src = Endless {
                byte,
                left: 200 << 20,
                read: 0,
            };
            let mut r = LineReader::new(BufReader::with_capacity(64 * 1024, src));
            let err = r.next_line().unwrap_err();
            let reason = err.reason();
            assert!(reason.starts_with("line too long"), "{reason}");
            assert!(reason.len() < 200, "{reason}");
            assert_eq!(reason.contains("binary"), byte == 0, "{reason}");
            assert!(r.line.capacity() <= 2 * 64 * 1024 + MAX_LINE);
            assert!(r.inner.get_ref().read <= 2 * 64 * 1024, "read too much");
        }
    }

    #[test]
    fn excerpts_are_short_and_escaped() {
        assert_eq!(excerpt(b"ab\"\x00\xff"), "\"ab\\\"\\x00\\xff\"");
        let long = excerpt(&[b'a'; 1000]);
        assert_eq!(long, format!("\"{}\"...", "a".repeat(40)));
        assert_eq!(
            excerpt(&[0; 1000]),
            format!("\"{}\"...", "\\x00".repeat(10))
        );
        for s in ["eth0", "a\tb", "it's \"q\"", "caf\u{e9}", "", "\u{202e}x"] {
            assert_eq!(excerpt_str(s), format!("{s:?}"), "as Debug when short");
        }
        let s = "é".repeat(100);
        assert_eq!(excerpt_str(&s), format!("{:?}...", "é".repeat(40)));
    }
}
