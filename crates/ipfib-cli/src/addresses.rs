//! Address lists: the one reader behind `lookup`'s stdin and `bench --trace FILE`.
//!
//! One address per line, surrounding whitespace trimmed, IPv4 in strict dotted-quad form (no
//! leading zeros, which some parsers read as octal). `lookup` answers line by line, so there a
//! blank line is an error (skipping it would shift every later answer against its address);
//! trace files may have blank lines and `#` comments, which are skipped.

use std::io::{BufRead, Read};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use ipfib::Address;
use ipfib_io::lines::excerpt_str;
use ipfib_io::LoadError;

/// An address of either family, surrounding whitespace ignored.
pub fn parse_addr(s: &str) -> Result<IpAddr, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty line (expected an IP address)".into());
    }
    ipfib::parse::address(t).ok_or_else(|| format!("not an IP address: {}", excerpt_str(t)))
}

/// The address as family `A`'s integer, or `None` when it is of the other family.
pub fn of_family<A: Address>(ip: IpAddr) -> Option<A> {
    match ip {
        IpAddr::V4(a) if A::BITS == 32 => Some(A::from_u128_left(u128::from(u32::from(a)) << 96)),
        IpAddr::V6(a) if A::BITS == 128 => Some(A::from_u128_left(u128::from(a))),
        _ => None,
    }
}

/// Reads addresses line by line, naming `source:LINE` in errors.
pub struct AddressLines<R> {
    input: R,
    source: PathBuf,
    skip_blank_and_comments: bool,
    line: Vec<u8>,
    line_no: u64,
}

/// Longest line accepted: an IPv6 address with spaces around fits many times over.
const MAX_LINE: usize = 1024;

impl<R: BufRead> AddressLines<R> {
    /// Every line must be an address (`lookup`).
    pub fn strict(input: R, source: &Path) -> Self {
        Self::new(input, source, false)
    }

    /// Blank lines and `#` comments are skipped (trace files).
    pub fn lenient(input: R, source: &Path) -> Self {
        Self::new(input, source, true)
    }

    fn new(input: R, source: &Path, skip_blank_and_comments: bool) -> Self {
        AddressLines {
            input,
            source: source.to_path_buf(),
            skip_blank_and_comments,
            line: Vec::with_capacity(64),
            line_no: 0,
        }
    }

    /// An error naming the current line.
    pub fn error(&self, reason: String) -> LoadError {
        LoadError::Line {
            path: self.source.clone(),
            line: self.line_no,
            reason,
        }
    }

    /// The next address, `None` at the end of the input.
    pub fn next_addr(&mut self) -> Result<Option<IpAddr>, LoadError> {
        loop {
            self.line.clear();
            let mut limited = Read::take(&mut self.input, MAX_LINE as u64 + 1);
            let n = limited
                .read_until(b'\n', &mut self.line)
                .map_err(|source| LoadError::Io {
                    path: self.source.clone(),
                    source,
                })?;
            if n == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            if self.line.len() > MAX_LINE && !self.line.ends_with(b"\n") {
                return Err(self.error(format!("line longer than {MAX_LINE} bytes")));
            }
            let text = std::str::from_utf8(&self.line)
                .map_err(|_| self.error("invalid UTF-8".into()))?
                .trim();
            if self.skip_blank_and_comments && (text.is_empty() || text.starts_with('#')) {
                continue;
            }
            return parse_addr(text).map(Some).map_err(|r| self.error(r));
        }
    }
}

/// Reads a whole address list of family `A` (a trace file: gzip or bzip2 allowed, `-` is
/// stdin); any bad line, or an address of the other family, fails the read naming the line.
pub fn read_family<A: Address>(path: &Path) -> Result<Vec<A>, LoadError> {
    let input = ipfib_io::decompress::open_maybe_compressed(path)?;
    let mut lines = AddressLines::lenient(input, path);
    let mut out = Vec::new();
    while let Some(ip) = lines.next_addr()? {
        match of_family::<A>(ip) {
            Some(a) => out.push(a),
            None => {
                return Err(lines.error(format!(
                    "{ip} is not an {} address (the table under test is {})",
                    A::FAMILY,
                    A::FAMILY
                )))
            }
        }
    }
    if out.is_empty() {
        return Err(LoadError::Line {
            path: path.to_path_buf(),
            line: 0,
            reason: "no addresses in the file".into(),
        });
    }
    Ok(out)
}

/// Reads an address list of both families (a trace file, as [`read_family`]): the IPv4 and
/// the IPv6 addresses apart, in file order; an empty list fails the read.
pub fn read_both(path: &Path) -> Result<(Vec<u32>, Vec<u128>), LoadError> {
    let input = ipfib_io::decompress::open_maybe_compressed(path)?;
    let mut lines = AddressLines::lenient(input, path);
    let (mut v4, mut v6) = (Vec::new(), Vec::new());
    while let Some(ip) = lines.next_addr()? {
        match ip {
            IpAddr::V4(a) => v4.push(u32::from(a)),
            IpAddr::V6(a) => v6.push(u128::from(a)),
        }
    }
    if v4.is_empty() && v6.is_empty() {
        return Err(LoadError::Line {
            path: path.to_path_buf(),
            line: 0,
            reason: "no addresses in the file".into(),
        });
    }
    Ok((v4, v6))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str, lenient: bool) -> Result<Vec<IpAddr>, String> {
        let mut lines = if lenient {
            AddressLines::lenient(text.as_bytes(), Path::new("t.txt"))
        } else {
            AddressLines::strict(text.as_bytes(), Path::new("t.txt"))
        };
        let mut out = Vec::new();
        while let Some(a) = lines.next_addr().map_err(|e| e.to_string())? {
            out.push(a);
        }
        Ok(out)
    }

    #[test]
    fn addresses_are_trimmed_and_checked() {
        assert_eq!(parse_addr(" 10.0.0.1\r\n").unwrap().to_string(), "10.0.0.1");
        assert_eq!(
            parse_addr("\t2001:DB8::1 ").unwrap().to_string(),
            "2001:db8::1"
        );
        for bad in [
            "   ",
            "10.0.0.256",
            "10.0.0.0/8",
            "fe80::1%eth0",
            "010.0.0.1",
            "1.2.3.4:80",
        ] {
            assert!(parse_addr(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            parse_addr("::ffff:1.2.3.4").unwrap().to_string(),
            "::ffff:1.2.3.4"
        );
        let long = "x".repeat(10_000);
        assert!(
            parse_addr(&long).unwrap_err().len() < 100,
            "quoted as an excerpt"
        );
    }

    #[test]
    fn strict_lists_refuse_blank_lines_lenient_ones_skip_them() {
        let text = "# c\n10.0.0.1\n\n2001:db8::1\n";
        assert_eq!(all(text, true).unwrap().len(), 2);
        let err = all(text, false).unwrap_err();
        assert!(err.starts_with("t.txt:1:"), "{err}");
        let err = all("10.0.0.1\n\n", false).unwrap_err();
        assert!(
            err.starts_with("t.txt:2:") && err.contains("empty"),
            "{err}"
        );
    }

    #[test]
    fn a_huge_line_is_refused_without_reading_it_whole() {
        let text = format!("10.0.0.1\n{}\n", "1".repeat(100_000));
        let err = all(&text, true).unwrap_err();
        assert!(
            err.contains("t.txt:2:") && err.contains("longer than"),
            "{err}"
        );
    }

    #[test]
    fn families_convert_to_their_integers_only() {
        let v4: IpAddr = "10.0.0.1".parse().unwrap();
        let v6: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(of_family::<u32>(v4), Some(0x0a00_0001));
        assert_eq!(of_family::<u128>(v4), None);
        assert_eq!(of_family::<u32>(v6), None, "a mapped address is IPv6");
        assert_eq!(of_family::<u128>(v6), Some(0xffff_0a00_0001));
    }
}
