//! MRT record framing (RFC 6396 §2): the common header, the body, and the byte offset of every
//! record in the decompressed stream.
//!
//! Framing is done here rather than by the parser library so that every error can name the
//! exact offset of the record it concerns, a short last record is always an error (never a
//! quietly shorter table), and the one known historical framing bug is repaired only on request.

use std::io::{self, BufRead, Read};

use super::header::{types, HEADER_LEN, MAX_BODY};

/// Body bytes allocated before any are read; real records are mostly far smaller.
const INITIAL_BODY: usize = 64 * 1024;

/// One framed record.
#[derive(Debug)]
pub(crate) struct Record {
    /// Offset of the header's first byte in the decompressed stream.
    pub offset: u64,
    /// Header timestamp (seconds).
    pub timestamp: u32,
    /// The microsecond field of `_ET` types (0 for the others).
    pub micros: u32,
    /// MRT type.
    pub kind: u16,
    /// MRT subtype.
    pub subtype: u16,
    /// The message, without the header (and without the microsecond field of `_ET` types).
    pub body: Vec<u8>,
    /// The declared length was the historical 4-bytes-short one and was corrected.
    pub repaired: bool,
}

/// Why the stream cannot be framed at `offset`.
#[derive(Debug)]
pub(crate) struct FrameError {
    /// Offset of the record that failed.
    pub offset: u64,
    /// What is wrong.
    pub reason: String,
    /// True when the failure is the end of the stream (a truncated last record): skipping it
    /// loses nothing that follows. Otherwise nothing after `offset` can be framed.
    pub at_end: bool,
}

/// Splits a decompressed MRT stream into records, counting bytes.
pub(crate) struct Framer<R> {
    input: R,
    offset: u64,
}

impl<R: BufRead> Framer<R> {
    /// A framer at offset 0 of `input`.
    pub fn new(input: R) -> Self {
        Framer { input, offset: 0 }
    }

    /// Bytes consumed so far (the offset of the next record).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next record, `None` at a clean end of stream. With `repair_legacy`, a TABLE_DUMP
    /// record whose entries run exactly 4 bytes past its declared length (early RIS dumps,
    /// e.g. rrc00 of January 2000) is read with the 4 extra bytes; without it such a record is
    /// an error that names the bug.
    pub fn next(&mut self, repair_legacy: bool) -> Result<Option<Record>, FrameError> {
        let offset = self.offset;
        let mut header = [0u8; HEADER_LEN];
        let got = self.read_up_to(&mut header, offset)?;
        if got == 0 {
            return Ok(None);
        }
        if got < HEADER_LEN {
            return Err(FrameError {
                offset,
                reason: format!(
                    "truncated record: the stream ends {got} bytes into a {HEADER_LEN}-byte MRT header"
                ),
                at_end: true,
            });
        }
        let timestamp = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
        let kind = u16::from_be_bytes([header[4], header[5]]);
        let subtype = u16::from_be_bytes([header[6], header[7]]);
        let length = u32::from_be_bytes([header[8], header[9], header[10], header[11]]);
        if !types::is_known(kind) || length > MAX_BODY {
            return Err(FrameError {
                offset,
                reason: format!(
                    "corrupt MRT header (type {kind}, subtype {subtype}, length {length}): \
                     not a record boundary, so nothing after it can be read"
                ),
                at_end: false,
            });
        }
        let mut body_len = length as usize;
        let mut micros = 0;
        if types::is_extended(kind) {
            if length < 4 {
                return Err(FrameError {
                    offset,
                    reason: format!("MRT type {kind} record of length {length}, shorter than its 4-byte microsecond field"),
                    at_end: false,
                });
            }
            let mut micro = [0u8; 4];
            let got = self.read_up_to(&mut micro, offset)?;
            if got < 4 {
                return Err(truncated(offset, length, got));
            }
            micros = u32::from_be_bytes(micro);
            body_len -= 4;
        }
        // Grown as the bytes arrive, not allocated from the declared length: a damaged or
        // hostile header may claim up to MAX_BODY bytes in a file that is much shorter.
        let mut body = Vec::with_capacity(body_len.min(INITIAL_BODY));
        let got = self.read_body(&mut body, body_len, offset)?;
        if got < body_len {
            return Err(truncated(offset, length, got));
        }
        let mut repaired = false;
        if kind == types::TABLE_DUMP && legacy_entries_overrun(subtype, &body) {
            if !repair_legacy {
                return Err(FrameError {
                    offset,
                    reason: format!(
                        "TABLE_DUMP record declares {length} bytes but its entries end 4 bytes \
                         later (a known bug of early RIS dumps); --skip-bad-records repairs such \
                         records"
                    ),
                    at_end: false,
                });
            }
            let got = self.read_body(&mut body, 4, offset)?;
            if got < 4 {
                return Err(truncated(offset, length + 4, body_len + got));
            }
            repaired = true;
        }
        Ok(Some(Record {
            offset,
            timestamp,
            micros,
            kind,
            subtype,
            body,
            repaired,
        }))
    }

    /// Reads until `buf` is full or the stream ends; returns the bytes read.
    fn read_up_to(&mut self, buf: &mut [u8], record: u64) -> Result<usize, FrameError> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.input.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.offset += filled as u64;
                    return Err(self.stream_error(record, e));
                }
            }
        }
        self.offset += filled as u64;
        Ok(filled)
    }

    /// Appends up to `len` bytes to `body`; returns the bytes appended.
    fn read_body(
        &mut self,
        body: &mut Vec<u8>,
        len: usize,
        record: u64,
    ) -> Result<usize, FrameError> {
        let before = body.len();
        let result = (&mut self.input).take(len as u64).read_to_end(body);
        let got = body.len() - before;
        self.offset += got as u64;
        match result {
            Ok(_) => Ok(got),
            Err(e) => Err(self.stream_error(record, e)),
        }
    }

    /// A failure of the underlying stream (usually a damaged or cut compressed file).
    /// `self.offset` already counts every byte read before the failure.
    fn stream_error(&self, record: u64, e: io::Error) -> FrameError {
        FrameError {
            offset: record,
            reason: format!(
                "cannot read the stream {} bytes into this record: {e} (damaged or truncated compressed file?)",
                self.offset - record
            ),
            at_end: e.kind() == io::ErrorKind::UnexpectedEof,
        }
    }
}

fn truncated(offset: u64, declared: u32, got: usize) -> FrameError {
    FrameError {
        offset,
        reason: format!(
            "truncated record: the header declares {declared} bytes of message but the stream ends after {got}"
        ),
        at_end: true,
    }
}

/// True when a TABLE_DUMP body's entries, walked by their own attribute lengths, end exactly 4
/// bytes past the body: the signature of the early-RIS writer that under-counted the length.
/// Any other shape (including a body that frames correctly) is false.
fn legacy_entries_overrun(subtype: u16, body: &[u8]) -> bool {
    let addr_len = match subtype {
        1 => 4usize,
        2 => 16,
        _ => return false,
    };
    // View and sequence numbers, then entries of: prefix, length, status, originated time,
    // peer address, peer AS, attribute length, attributes.
    let fixed = 2 * addr_len + 10;
    let mut at = 4usize;
    while at < body.len() {
        let attr_len_at = at + fixed - 2;
        if attr_len_at + 2 > body.len() {
            return false;
        }
        let attr_len = usize::from(u16::from_be_bytes([
            body[attr_len_at],
            body[attr_len_at + 1],
        ]));
        let end = at + fixed + attr_len;
        if end == body.len() + 4 {
            return true;
        }
        if end > body.len() {
            return false;
        }
        at = end;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u16, subtype: u16, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(1_000_000u32.to_be_bytes());
        out.extend(kind.to_be_bytes());
        out.extend(subtype.to_be_bytes());
        out.extend((body.len() as u32).to_be_bytes());
        out.extend(body);
        out
    }

    /// A TABLE_DUMP v1 IPv4 body with one entry carrying `attrs`.
    fn td1_body(attrs: &[u8]) -> Vec<u8> {
        let mut b = vec![0, 0, 0, 1]; // view, sequence
        b.extend([10, 0, 0, 0, 8, 1]); // prefix 10.0.0.0/8, status
        b.extend(0u32.to_be_bytes()); // originated
        b.extend([192, 0, 2, 1]); // peer
        b.extend(65000u16.to_be_bytes());
        b.extend((attrs.len() as u16).to_be_bytes());
        b.extend(attrs);
        b
    }

    #[test]
    fn frames_records_and_counts_offsets() {
        let mut stream = record(13, 1, b"abc");
        stream.extend(record(12, 1, &td1_body(&[])));
        let mut f = Framer::new(&stream[..]);
        let a = f.next(false).unwrap().unwrap();
        assert_eq!(
            (a.offset, a.kind, a.subtype, a.body.as_slice()),
            (0, 13, 1, &b"abc"[..])
        );
        let b = f.next(false).unwrap().unwrap();
        assert_eq!(b.offset, 15);
        assert!(f.next(false).unwrap().is_none());
        assert_eq!(f.offset(), stream.len() as u64);
    }

    #[test]
    fn et_records_drop_the_microseconds_from_the_body() {
        let mut body = 123u32.to_be_bytes().to_vec();
        body.extend(b"xy");
        let stream = record(17, 4, &body);
        let r = Framer::new(&stream[..]).next(false).unwrap().unwrap();
        assert_eq!(r.body, b"xy");
    }

    #[test]
    fn a_cut_body_is_an_error_at_the_record_start() {
        let mut stream = record(13, 1, b"abc");
        let second = stream.len() as u64;
        stream.extend(record(13, 2, b"0123456789"));
        stream.truncate(stream.len() - 3);
        let mut f = Framer::new(&stream[..]);
        f.next(false).unwrap();
        let err = f.next(false).unwrap_err();
        assert_eq!(err.offset, second);
        assert!(err.at_end);
        assert!(
            err.reason.contains("declares 10 bytes") && err.reason.contains("after 7"),
            "{}",
            err.reason
        );
    }

    #[test]
    fn a_cut_header_is_an_error() {
        let stream = record(13, 1, b"abc");
        let err = Framer::new(&stream[..5]).next(false).unwrap_err();
        assert_eq!(err.offset, 0);
        assert!(err.reason.contains("5 bytes into"), "{}", err.reason);
    }

    #[test]
    fn an_unknown_type_or_huge_length_is_corrupt() {
        let stream = record(99, 0, b"");
        assert!(!Framer::new(&stream[..]).next(false).unwrap_err().at_end);
        let mut huge = record(13, 1, b"");
        huge[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(Framer::new(&huge[..]).next(false).is_err());
    }

    #[test]
    fn the_early_ris_length_bug_is_repaired_only_on_request() {
        // Attributes: ORIGIN IGP (4 bytes). The header claims 4 bytes fewer than written.
        let body = td1_body(&[0x40, 1, 1, 0]);
        let mut stream = record(12, 1, &body);
        let declared = (body.len() - 4) as u32;
        stream[8..12].copy_from_slice(&declared.to_be_bytes());
        let err = Framer::new(&stream[..]).next(false).unwrap_err();
        assert!(err.reason.contains("early RIS"), "{}", err.reason);
        let r = Framer::new(&stream[..]).next(true).unwrap().unwrap();
        assert!(r.repaired);
        assert_eq!(r.body, body);
        // A correctly framed record is never "repaired".
        let ok = record(12, 1, &body);
        assert!(!Framer::new(&ok[..]).next(true).unwrap().unwrap().repaired);
    }
}
