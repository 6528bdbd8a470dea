//! The FIB text format: one route per line, `prefix/len next_hop`.
//!
//! ```text
//! # comments start with '#', whole-line or after a route; blank lines are ignored
//! 10.0.0.0/8       1
//! 2001:db8::/32    17   # IPv4 and IPv6 mix freely in one file
//! ```
//!
//! Lines end in `\n`, `\r\n` or a lone `\r`; fields are separated by any ASCII whitespace. The
//! next hop is a
//! decimal `u32`; every value, 0 included, is a real next hop. A later line for the same prefix
//! replaces the earlier one, as a routing daemon replaying announcements would. Input may be
//! gzip- or bzip2-compressed (recognised by magic bytes, see [`super::decompress`]).
//!
//! The reader is strict because a silently skipped or masked line changes forwarding: a bad
//! prefix, host bits set, an over-long length, a missing or extra field, a next hop that is not
//! a `u32` or invalid UTF-8 stops the load with [`LoadError::Line`] naming the file and line, and
//! nothing of the file is used.
//!
//! Hostile input costs bounded memory: a line is at most [`MAX_LINE`] bytes (longer is an error
//! as soon as the limit is passed, so a binary file or a 200 MB line is never read into memory),
//! duplicate routes are merged while reading, and errors quote at most a short escaped excerpt
//! of the line.
//!
//! It is also fast (lines are parsed in place in the read buffer, no allocation per route, and
//! sorted input is never sorted again), since loading a 900 K-route table is the first thing
//! every command does.

use std::io::{BufRead, Write};
use std::path::Path;

use crate::decompress::{display_path, open_maybe_compressed};
pub use crate::lines::MAX_LINE;
use crate::lines::{excerpt, excerpt_str, LineReader};
use crate::LoadError;
use ipfib::{Address, NextHop, Prefix, RouteTable, Table};

/// Reads a FIB text file (plain, gzip or bzip2; `-` is standard input).
///
/// Errors name the file and, for a malformed line, the 1-based line number:
/// `table.txt:17: host bits set in 10.0.0.1/8 (the network is 10.0.0.0/8)`.
pub fn read_fib(path: &Path) -> Result<Table, LoadError> {
    let reader = open_maybe_compressed(path)?;
    read_fib_from(reader, &display_path(path))
}

/// Reads the text format from an already opened, already decompressed stream; `path` is only
/// used to name the source in errors.
///
/// Lines may end in `\n`, `\r\n` or a lone `\r`. Memory grows with the number of distinct
/// routes, not with the input: a line longer than [`MAX_LINE`] bytes is an error as soon as the
/// limit is passed, and a route repeated any number of times is held once. An input without
/// routes gives an empty table here; [`crate::load_fib`] refuses that unless asked.
pub fn read_fib_from<R: BufRead>(reader: R, path: &Path) -> Result<Table, LoadError> {
    let mut v4 = Collector::<u32>::new();
    let mut v6 = Collector::<u128>::new();
    let mut lines = LineReader::new(reader);
    loop {
        let line = match lines.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => return Err(e.into_load_error(path, lines.line_number())),
        };
        match parse_line(line) {
            Ok(Some(Route::V4(p, nh))) => v4.push(p, nh),
            Ok(Some(Route::V6(p, nh))) => v6.push(p, nh),
            Ok(None) => {}
            Err(reason) => {
                let reason = explain(line, reason);
                return Err(LoadError::Line {
                    path: path.to_path_buf(),
                    line: lines.line_number(),
                    reason,
                });
            }
        }
    }
    Ok(Table::from_families(v4.finish(), v6.finish()))
}

/// The reason a line is bad; a line with NUL bytes is named as binary data, whatever field
/// the parser stumbled on.
fn explain(line: &[u8], reason: String) -> String {
    match memchr::memchr(0, line) {
        Some(at) => format!(
            "binary data, not a text FIB: NUL byte at byte {} of the line {}",
            at + 1,
            excerpt(line)
        ),
        None => reason,
    }
}

/// The routes of one family as they are read, in memory that grows with the number of
/// distinct prefixes, not with the number of lines: a repeat of the previous line's prefix
/// replaces it in place, and whenever the list has doubled since it was last compacted it is
/// sorted and each prefix's last route kept. Input in (address, length) order without repeats
/// (every real table) is never sorted at all.
struct Collector<A: Address> {
    routes: Vec<(Prefix<A>, NextHop)>,
    /// Every prefix is greater than the one before: nothing to sort or merge.
    ordered: bool,
    /// Compact when the list reaches this length.
    compact_at: usize,
}

/// Lists shorter than this are never compacted before the end.
const MIN_COMPACT: usize = 1 << 16;

impl<A: Address> Collector<A> {
    fn new() -> Self {
        Collector {
            routes: Vec::new(),
            ordered: true,
            compact_at: MIN_COMPACT,
        }
    }

    #[inline]
    fn push(&mut self, prefix: Prefix<A>, next_hop: NextHop) {
        if let Some(last) = self.routes.last_mut() {
            if last.0 == prefix {
                last.1 = next_hop;
                return;
            }
            if last.0 > prefix {
                self.ordered = false;
            }
        }
        if self.routes.len() >= self.compact_at {
            self.compact();
        }
        self.routes.push((prefix, next_hop));
    }

    /// Sorts by prefix and keeps, for each prefix, the route that came last in the file. The
    /// sort is stable, so equal prefixes stay in file order.
    fn compact(&mut self) {
        if !self.ordered {
            self.routes.sort_by_key(|route| route.0);
            self.routes.dedup_by(|later, kept| {
                if later.0 == kept.0 {
                    kept.1 = later.1;
                    true
                } else {
                    false
                }
            });
            self.ordered = true;
        }
        self.compact_at = MIN_COMPACT.max(2 * self.routes.len());
        if self.routes.capacity() > 2 * self.compact_at {
            self.routes.shrink_to(self.compact_at);
        }
    }

    fn finish(mut self) -> RouteTable<A> {
        self.compact();
        self.routes.into_iter().collect()
    }
}

/// One parsed line.
enum Route {
    V4(Prefix<u32>, NextHop),
    V6(Prefix<u128>, NextHop),
}

/// Parses one line (with or without its `\n`): `Ok(None)` for a blank or comment-only line, the
/// reason as text for a malformed one.
fn parse_line(raw: &[u8]) -> Result<Option<Route>, String> {
    let line = std::str::from_utf8(raw)
        .map_err(|e| format!("invalid UTF-8 at byte {} of the line", e.valid_up_to() + 1))?;
    // Byte-level field split: the separators are ASCII, so every cut is a char boundary. This
    // (and `ipfib::parse`'s address parsers) replaces `find`/`split_ascii_whitespace`/`Ipv4Addr::from_str`,
    // which together were about half of the load time of a 900 K-route table.
    let bytes = line.as_bytes();
    let mut fields = [""; 3];
    let mut count = 0;
    let mut i = 0;
    while i < bytes.len() && bytes[i] != b'#' {
        if bytes[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b'#' {
            i += 1;
        }
        if count < fields.len() {
            fields[count] = &line[start..i];
        }
        count += 1;
    }
    let [prefix, next_hop, extra] = fields;
    match count {
        0 => return Ok(None),
        1 => {
            return Err(format!(
                "missing next hop after {} (expected `prefix/len next_hop`)",
                excerpt_str(prefix)
            ))
        }
        2 => {}
        _ => {
            return Err(format!(
                "unexpected extra field {} (expected `prefix/len next_hop`)",
                excerpt_str(extra)
            ))
        }
    }
    let next_hop = parse_u32(next_hop).ok_or_else(|| {
        format!(
            "next hop {} is not an integer in 0..=4294967295",
            excerpt_str(next_hop)
        )
    })?;
    Ok(Some(match text_prefix(prefix)? {
        TextPrefix::V4(p) => Route::V4(p, next_hop),
        TextPrefix::V6(p) => Route::V6(p, next_hop),
    }))
}

/// A prefix in text form, checked.
enum TextPrefix {
    V4(Prefix<u32>),
    V6(Prefix<u128>),
}

/// `address/length` as a table file writes it: the length required, at most the family's
/// bits, no host bits set; the reason as text otherwise.
fn text_prefix(prefix: &str) -> Result<TextPrefix, String> {
    let slash = prefix.bytes().position(|b| b == b'/').ok_or_else(|| {
        format!(
            "{} is not a prefix (expected address/length)",
            excerpt_str(prefix)
        )
    })?;
    let (addr, len) = (&prefix[..slash], &prefix[slash + 1..]);
    let len = parse_u32(len).ok_or_else(|| {
        format!(
            "bad prefix length {} in {}",
            excerpt_str(len),
            excerpt_str(prefix)
        )
    })?;
    if addr.as_bytes().contains(&b':') {
        let ip = ipfib::parse::ipv6(addr.as_bytes()).ok_or_else(|| {
            format!(
                "bad IPv6 address {} in {}",
                excerpt_str(addr),
                excerpt_str(prefix)
            )
        })?;
        Ok(TextPrefix::V6(make_prefix(ip, len)?))
    } else {
        let ip = ipfib::parse::ipv4(addr.as_bytes()).ok_or_else(|| {
            format!(
                "bad IPv4 address {} in {}",
                excerpt_str(addr),
                excerpt_str(prefix)
            )
        })?;
        Ok(TextPrefix::V4(make_prefix(ip, len)?))
    }
}

/// A prefix as the table files write it (`10.0.0.0/8`, `2001:db8::/32`), accepted exactly as
/// the file reader accepts a line's prefix: the length is required and at most 32 or 128, host
/// bits must be clear, the address is strict (no leading zeros in IPv4 octets, no spaces).
/// The error is the reason, as a line of the file reader's messages says it.
///
/// ```
/// use ipfib_io::text::parse_prefix;
///
/// assert_eq!(parse_prefix("10.0.0.0/8").unwrap(), "10.0.0.0/8".parse::<ipnet::IpNet>().unwrap());
/// assert!(parse_prefix("10.0.0.1/8").unwrap_err().contains("host bits"));
/// assert!(parse_prefix("10.0.0.0/33").is_err());
/// assert!(parse_prefix("10.0.0.0").is_err());
/// ```
pub fn parse_prefix(prefix: &str) -> Result<ipnet::IpNet, String> {
    Ok(match text_prefix(prefix)? {
        TextPrefix::V4(p) => ipnet::IpNet::V4(p.to_net()),
        TextPrefix::V6(p) => ipnet::IpNet::V6(p.to_net()),
    })
}

/// Checks length and host bits through [`Prefix::new`], so the file format accepts exactly
/// the prefixes the library does.
fn make_prefix<A: Address>(addr: A, len: u32) -> Result<Prefix<A>, String> {
    let len8 = u8::try_from(len)
        .map_err(|_| format!("prefix length {len} is longer than {} bits", A::BITS))?;
    Prefix::new(addr, len8).map_err(|e| e.to_string())
}

/// A plain decimal `u32`: digits only (no sign, no spaces), no overflow.
fn parse_u32(s: &str) -> Option<u32> {
    if s.is_empty() {
        return None;
    }
    s.bytes().try_fold(0u32, |acc, b| {
        let digit = b.checked_sub(b'0').filter(|d| *d < 10)?;
        acc.checked_mul(10)?.checked_add(u32::from(digit))
    })
}

/// Writes a FIB in the text format, IPv4 routes first, each family in (address, length)
/// order: `prefix/len next_hop`, one route per line.
pub fn write_fib<W: Write>(mut out: W, fib: &Table) -> std::io::Result<()> {
    for (prefix, next_hop) in fib.v4().iter() {
        writeln!(out, "{prefix} {next_hop}")?;
    }
    for (prefix, next_hop) in fib.v6().iter() {
        writeln!(out, "{prefix} {next_hop}")?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(line: &str) -> Result<Option<String>, String> {
        parse_line(line.as_bytes()).map(|r| {
            r.map(|r| match r {
                Route::V4(p, nh) => format!("{p} {nh}"),
                Route::V6(p, nh) => format!("{p} {nh}"),
            })
        })
    }

    #[test]
    fn parses_both_families_and_whitespace() {
        assert_eq!(route("10.0.0.0/8 1\n"), Ok(Some("10.0.0.0/8 1".into())));
        assert_eq!(
            route("\t2001:DB8::/32\t\t0\r\n"),
            Ok(Some("2001:db8::/32 0".into()))
        );
        assert_eq!(
            route("0.0.0.0/0 4294967295"),
            Ok(Some("0.0.0.0/0 4294967295".into()))
        );
        assert_eq!(route("::/0 7 # default"), Ok(Some("::/0 7".into())));
    }

    #[test]
    fn blank_and_comment_lines_are_nothing() {
        for line in ["", "\n", "   \r\n", "# x", "  # 10.0.0.0/8 1", "#"] {
            assert_eq!(route(line), Ok(None), "{line:?}");
        }
    }

    #[test]
    fn malformed_lines_say_why() {
        let cases = [
            ("10.0.0.1/8 1", "host bits set"),
            ("10.0.0.0/33 1", "longer than 32"),
            ("::/129 1", "longer than 128"),
            ("10.0.0.0/300 1", "longer than 32"),
            ("10.0.0.0/x 1", "bad prefix length"),
            ("10.0.0.0/ 1", "bad prefix length"),
            ("10.0.0.0 1", "not a prefix"),
            ("10.0.0/8 1", "bad IPv4 address"),
            ("2001:db8:::/32 1", "bad IPv6 address"),
            ("10.0.0.0/8", "missing next hop"),
            ("10.0.0.0/8 1 2", "extra field"),
            ("10.0.0.0/8 -1", "next hop"),
            ("10.0.0.0/8 +1", "next hop"),
            ("10.0.0.0/8 4294967296", "next hop"),
            ("10.0.0.0/8 1.5", "next hop"),
        ];
        for (line, want) in cases {
            let err = route(line).expect_err(line);
            assert!(err.contains(want), "{line:?}: {err}");
        }
        let err = parse_line(b"10.0.0.0/8 1 # caf\xe9").err().unwrap();
        assert!(err.contains("UTF-8"), "{err}");
    }

    #[test]
    fn strict_u32() {
        assert_eq!(parse_u32("0"), Some(0));
        assert_eq!(parse_u32("007"), Some(7));
        assert_eq!(parse_u32("4294967295"), Some(u32::MAX));
        assert_eq!(parse_u32("4294967296"), None);
        assert_eq!(parse_u32(""), None);
        assert_eq!(parse_u32("1 "), None);
    }
}
