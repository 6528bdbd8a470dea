//! BMP framing (RFC 7854 §4.1): the 6-byte common header (version 3, length, type), the
//! length checked against the type's bounds *before* anything is allocated, then the body
//! read into one reused buffer. Messages of unknown types are read past and counted, as the
//! RFC asks of a station. Offsets count from the session's first byte.

use std::io::{self, Read};

use super::error::Problem;

/// Length of the common header.
pub const COMMON_HEADER: usize = 6;
/// Length of the per-peer header (RFC 7854 §4.2).
pub const PER_PEER_HEADER: usize = 42;
/// The largest message accepted: a per-peer header and an extended (RFC 8654) BGP message.
/// A larger length is an error, never an allocation.
pub const MAX_MESSAGE: u32 = (COMMON_HEADER + PER_PEER_HEADER + 65_535) as u32;

/// BMP message types.
pub mod kind {
    /// Route Monitoring.
    pub const ROUTE_MONITORING: u8 = 0;
    /// Statistics Report.
    pub const STATISTICS: u8 = 1;
    /// Peer Down Notification.
    pub const PEER_DOWN: u8 = 2;
    /// Peer Up Notification.
    pub const PEER_UP: u8 = 3;
    /// Initiation.
    pub const INITIATION: u8 = 4;
    /// Termination.
    pub const TERMINATION: u8 = 5;
    /// Route Mirroring.
    pub const ROUTE_MIRRORING: u8 = 6;

    /// The type's name, for errors and reports.
    pub fn name(kind: u8) -> &'static str {
        match kind {
            ROUTE_MONITORING => "route monitoring",
            STATISTICS => "statistics report",
            PEER_DOWN => "peer down",
            PEER_UP => "peer up",
            INITIATION => "initiation",
            TERMINATION => "termination",
            ROUTE_MIRRORING => "route mirroring",
            _ => "unknown type",
        }
    }

    /// The smallest length of a message of this type.
    pub(crate) fn min_len(kind: u8) -> u32 {
        let peer = (super::COMMON_HEADER + super::PER_PEER_HEADER) as u32;
        match kind {
            INITIATION | TERMINATION => super::COMMON_HEADER as u32,
            // Local address, ports, two OPEN messages of at least 29 bytes each.
            PEER_UP => peer + 20 + 2 * 29,
            // A BGP message header at least.
            ROUTE_MONITORING => peer + 19,
            STATISTICS => peer + 4,
            PEER_DOWN => peer + 1,
            ROUTE_MIRRORING => peer,
            _ => super::COMMON_HEADER as u32,
        }
    }
}

/// One whole message.
#[derive(Debug)]
pub struct Frame<'a> {
    /// Offset of its first byte in the session.
    pub offset: u64,
    /// Its type (0 to 6; unknown types are skipped by the framer).
    pub kind: u8,
    /// What follows the common header.
    pub body: &'a [u8],
}

/// A framing error: where, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameError {
    /// Offset of the message the error is in.
    pub offset: u64,
    /// The message's type, once its header was read.
    pub kind: Option<u8>,
    /// What is wrong.
    pub problem: Problem,
}

/// Reads whole BMP messages from a byte stream.
pub struct Framer<R> {
    input: R,
    buf: Vec<u8>,
    offset: u64,
    unknown: u64,
}

impl<R: Read> Framer<R> {
    /// A framer over `input` (give it a buffered reader: the header and body are separate
    /// reads).
    pub fn new(input: R) -> Self {
        Framer {
            input,
            buf: Vec::new(),
            offset: 0,
            unknown: 0,
        }
    }

    /// Bytes consumed so far (the offset of the next message).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Messages of unknown types skipped so far.
    pub fn unknown(&self) -> u64 {
        self.unknown
    }

    /// The next message; `None` at the end of the stream between two messages.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, FrameError> {
        loop {
            let offset = self.offset;
            let mut head = [0u8; COMMON_HEADER];
            let got = read_full(&mut self.input, &mut head).map_err(|e| FrameError {
                offset,
                kind: None,
                problem: Problem::Io(e.to_string()),
            })?;
            if got == 0 {
                return Ok(None);
            }
            let fail = |kind, problem| FrameError {
                offset,
                kind,
                problem,
            };
            if got < COMMON_HEADER {
                return Err(fail(
                    None,
                    Problem::Truncated {
                        got: got as u64,
                        need: COMMON_HEADER as u64,
                    },
                ));
            }
            if head[0] != 3 {
                return Err(fail(None, Problem::Version(head[0])));
            }
            let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]);
            let kind = head[5];
            let min = kind::min_len(kind);
            if len < min || len > MAX_MESSAGE {
                return Err(fail(
                    Some(kind),
                    Problem::Length {
                        len,
                        kind: kind::name(kind),
                        min,
                        max: MAX_MESSAGE,
                    },
                ));
            }
            let body_len = len as usize - COMMON_HEADER;
            self.buf.resize(body_len, 0);
            let got = read_full(&mut self.input, &mut self.buf)
                .map_err(|e| fail(Some(kind), Problem::Io(e.to_string())))?;
            if got < body_len {
                return Err(fail(
                    Some(kind),
                    Problem::Truncated {
                        got: (COMMON_HEADER + got) as u64,
                        need: u64::from(len),
                    },
                ));
            }
            self.offset += u64::from(len);
            if kind > kind::ROUTE_MIRRORING {
                self.unknown += 1;
                continue;
            }
            return Ok(Some(Frame {
                offset,
                kind,
                body: &self.buf,
            }));
        }
    }
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut out = vec![3];
        out.extend(((COMMON_HEADER + body.len()) as u32).to_be_bytes());
        out.push(kind);
        out.extend(body);
        out
    }

    /// A reader that hands out one byte per call.
    struct Trickle(Vec<u8>, usize);

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.1 == self.0.len() || buf.is_empty() {
                return Ok(0);
            }
            buf[0] = self.0[self.1];
            self.1 += 1;
            Ok(1)
        }
    }

    #[test]
    fn messages_split_across_reads_are_whole_and_unknown_types_are_skipped() {
        let mut bytes = message(kind::INITIATION, &[0, 2, 0, 1, b'b']);
        bytes.extend(message(9, &[1, 2, 3]));
        bytes.extend(message(kind::TERMINATION, &[]));
        let mut framer = Framer::new(Trickle(bytes, 0));
        let f = framer.next_frame().unwrap().unwrap();
        assert_eq!(
            (f.offset, f.kind, f.body),
            (0, kind::INITIATION, &[0, 2, 0, 1, b'b'][..])
        );
        let f = framer.next_frame().unwrap().unwrap();
        assert_eq!((f.offset, f.kind, f.body.len()), (20, kind::TERMINATION, 0));
        assert!(framer.next_frame().unwrap().is_none());
        assert_eq!((framer.unknown(), framer.offset()), (1, 26));
    }

    #[test]
    fn impossible_lengths_fail_before_allocating() {
        for (len, kind) in [
            (0u32, 4u8),
            (5, 4),
            (47, 0),
            (MAX_MESSAGE + 1, 0),
            (u32::MAX, 9),
        ] {
            let mut bytes = vec![3];
            bytes.extend(len.to_be_bytes());
            bytes.push(kind);
            let mut framer = Framer::new(&bytes[..]);
            let e = framer.next_frame().unwrap_err();
            assert!(matches!(e.problem, Problem::Length { .. }), "{len}: {e:?}");
            assert_eq!(framer.buf.capacity(), 0);
        }
        let e = Framer::new(&[4u8, 0, 0, 0, 6, 4][..])
            .next_frame()
            .unwrap_err();
        assert_eq!(e.problem, Problem::Version(4));
    }

    #[test]
    fn the_end_inside_a_header_or_body_says_how_much_arrived() {
        let whole = message(kind::INITIATION, &[0, 2, 0, 1, b'b']);
        let mut two = whole.clone();
        two.extend(&whole[..3]);
        let mut framer = Framer::new(&two[..]);
        framer.next_frame().unwrap().unwrap();
        let e = framer.next_frame().unwrap_err();
        assert_eq!(
            (e.offset, e.problem),
            (11, Problem::Truncated { got: 3, need: 6 })
        );
        let e = Framer::new(&whole[..9]).next_frame().unwrap_err();
        assert_eq!(e.problem, Problem::Truncated { got: 9, need: 11 });
    }
}
