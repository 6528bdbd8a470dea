//! Update streams: route announcements and withdrawals in file order, from MRT BGP4MP /
//! BGP4MP_ET files or the text streams of the shared data set, as [`UpdateRecord`]s.
//!
//! The text format is one prefix per line:
//!
//! ```text
//! unix_ts[.usec] A prefix/len peer_ip next_hop     # announcement
//! unix_ts[.usec] W prefix/len peer_ip              # withdrawal
//! unix_ts a|w prefix/len next_hop                  # poptrie's single-peer form (LINX)
//! ```
//!
//! (`#` starts a comment line; in the poptrie form a withdrawal's next hop is `0.0.0.0` and
//! the peer is unnamed.) The format is recognised by content, like [`crate::load_fib`]: a
//! stream that starts with an MRT header is MRT, anything else text. Errors name the line
//! (text) or the byte offset of the record (MRT) in the decompressed stream.
//!
//! What the records mean for a forwarding table (which peer's routes, which next hop) is the
//! caller's choice; `ipfib replay` documents its rules.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::net::IpAddr;
use std::path::Path;

use ipnet::IpNet;

use crate::decompress::{display_path, open_maybe_compressed};
use crate::lines::{excerpt, LineReader};
use crate::mrt::{looks_like_mrt, HEADER_LEN};
use crate::{peek, LoadError};

/// One prefix announced or withdrawn by one peer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpdateRecord {
    /// When it was received: microseconds since the Unix epoch (whole seconds × 10^6 when the
    /// source has no finer time).
    pub time_us: u64,
    /// The BGP peer that sent it; `None` when the source does not say (poptrie's text form).
    pub peer: Option<IpAddr>,
    /// The prefix (host bits are always zero: a record with host bits set is a bad record).
    pub prefix: IpNet,
    /// Announcement or withdrawal.
    pub kind: UpdateKind,
}

/// What happens to the prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateKind {
    /// The peer announces a route (a new one, or a replacement of its previous one).
    Announce {
        /// The BGP next hop, when the message carries one.
        next_hop: Option<IpAddr>,
    },
    /// The peer withdraws its route.
    Withdraw,
}

/// What reading an update stream did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct UpdateReport {
    /// `"text"` or `"mrt"`.
    pub format: &'static str,
    /// Lines (text) or records (MRT) read.
    pub records: u64,
    /// MRT records that carry no prefix update (state changes, OPEN, KEEPALIVE, ...), and
    /// prefixes of other address families (multicast, VPN, ...): left out. The sum of
    /// `ignored_by_reason`.
    pub ignored: u64,
    /// What `ignored` counts, by reason (e.g. "KEEPALIVE messages"): every record or prefix
    /// left out is counted under one.
    pub ignored_by_reason: BTreeMap<&'static str, u64>,
    /// Bad records skipped because `skip_bad_records` was set.
    pub skipped: u64,
    /// The error of the first skipped record (file, offset, problem), to say why.
    pub first_skipped: Option<String>,
}

impl UpdateReport {
    /// Counts `n` records or prefixes left out for `reason`.
    #[cfg(feature = "mrt")]
    pub(crate) fn ignore(&mut self, reason: &'static str, n: u64) {
        if n > 0 {
            self.ignored += n;
            *self.ignored_by_reason.entry(reason).or_default() += n;
        }
    }
}

/// Reads a whole update stream (plain, gzip or bzip2; `-` is standard input). With
/// `skip_bad_records`, an MRT record that cannot be parsed is counted and left out instead of
/// ending the read with an error (text lines are always checked strictly).
pub fn read_updates(
    path: &Path,
    skip_bad_records: bool,
) -> Result<(Vec<UpdateRecord>, UpdateReport), LoadError> {
    let input = open_maybe_compressed(path)?;
    read_updates_from(input, &display_path(path), skip_bad_records)
}

/// [`read_updates`] from an already decompressed stream; `name` is what errors call it.
pub fn read_updates_from(
    input: Box<dyn BufRead + Send>,
    name: &Path,
    skip_bad_records: bool,
) -> Result<(Vec<UpdateRecord>, UpdateReport), LoadError> {
    let (head, input) = peek(input, HEADER_LEN).map_err(|source| LoadError::Io {
        path: name.to_path_buf(),
        source,
    })?;
    if looks_like_mrt(&head) {
        read_mrt(input, name, skip_bad_records)
    } else {
        read_text(input, name)
    }
}

#[cfg(feature = "mrt")]
fn read_mrt(
    input: Box<dyn BufRead + Send>,
    name: &Path,
    skip_bad_records: bool,
) -> Result<(Vec<UpdateRecord>, UpdateReport), LoadError> {
    crate::mrt::updates::read(input, name, skip_bad_records)
}

#[cfg(not(feature = "mrt"))]
fn read_mrt(
    _input: Box<dyn BufRead + Send>,
    name: &Path,
    _skip_bad_records: bool,
) -> Result<(Vec<UpdateRecord>, UpdateReport), LoadError> {
    Err(LoadError::Record {
        path: name.to_path_buf(),
        offset: 0,
        reason: "this is an MRT file, and this build of ipfib has no MRT support \
                 (cargo feature `mrt`)"
            .into(),
    })
}

/// Reads the text update format.
pub fn read_text<R: BufRead>(
    input: R,
    name: &Path,
) -> Result<(Vec<UpdateRecord>, UpdateReport), LoadError> {
    let mut lines = LineReader::new(input);
    let mut out = Vec::new();
    let mut report = UpdateReport {
        format: "text",
        ..UpdateReport::default()
    };
    loop {
        let line = match lines.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => return Err(e.into_load_error(name, lines.line_number())),
        };
        report.records += 1;
        match parse_line(line) {
            Ok(Some(record)) => out.push(record),
            Ok(None) => {}
            Err(reason) => {
                return Err(LoadError::Line {
                    path: name.to_path_buf(),
                    line: lines.line_number(),
                    reason,
                })
            }
        }
    }
    Ok((out, report))
}

/// One line: `None` for blank and comment lines, `Err` with the reason for a bad one.
fn parse_line(line: &[u8]) -> Result<Option<UpdateRecord>, String> {
    let text = std::str::from_utf8(line)
        .map_err(|_| format!("not UTF-8 text: {}", excerpt(line)))?
        .trim();
    if text.is_empty() || text.starts_with('#') {
        return Ok(None);
    }
    let fields: Vec<&str> = text.split_ascii_whitespace().collect();
    let bad = |what: &str| format!("{what} in {}", excerpt(line));
    if fields.len() < 3 {
        return Err(bad(
            "expected `time A|W prefix peer [next_hop]` or `time a|w prefix next_hop`",
        ));
    }
    let time_us = parse_time(fields[0]).ok_or_else(|| bad("bad time"))?;
    let prefix: IpNet = fields[2].parse().map_err(|_| bad("bad prefix"))?;
    if prefix.trunc() != prefix {
        return Err(format!(
            "host bits set in {prefix} (the network is {})",
            prefix.trunc()
        ));
    }
    let addr = |i: usize| -> Result<Option<IpAddr>, String> {
        fields
            .get(i)
            .map(|s| s.parse::<IpAddr>().map_err(|_| bad("bad address")))
            .transpose()
    };
    let (peer, kind, max_fields) = match fields[1] {
        "A" => (
            addr(3)?.ok_or_else(|| bad("missing peer"))?,
            UpdateKind::Announce { next_hop: addr(4)? },
            5,
        ),
        "W" => (
            addr(3)?.ok_or_else(|| bad("missing peer"))?,
            UpdateKind::Withdraw,
            4,
        ),
        "a" => {
            let nh = addr(3)?.ok_or_else(|| bad("missing next hop"))?;
            return finish(fields.len(), 4, line, time_us, None, prefix, {
                UpdateKind::Announce { next_hop: Some(nh) }
            });
        }
        "w" => {
            addr(3)?;
            return finish(
                fields.len(),
                4,
                line,
                time_us,
                None,
                prefix,
                UpdateKind::Withdraw,
            );
        }
        _ => return Err(bad("expected A, W, a or w as the second field")),
    };
    finish(
        fields.len(),
        max_fields,
        line,
        time_us,
        Some(peer),
        prefix,
        kind,
    )
}

fn finish(
    fields: usize,
    max: usize,
    line: &[u8],
    time_us: u64,
    peer: Option<IpAddr>,
    prefix: IpNet,
    kind: UpdateKind,
) -> Result<Option<UpdateRecord>, String> {
    if fields > max {
        return Err(format!("trailing fields in {}", excerpt(line)));
    }
    Ok(Some(UpdateRecord {
        time_us,
        peer,
        prefix,
        kind,
    }))
}

/// `seconds[.fraction]` as microseconds (at most 6 fraction digits).
fn parse_time(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.').unwrap_or((s, ""));
    if secs.is_empty() || !secs.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if frac.len() > 6 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let micros = if frac.is_empty() {
        0
    } else {
        frac.parse::<u64>().ok()? * 10u64.pow(6 - frac.len() as u32)
    };
    secs.parse::<u64>()
        .ok()?
        .checked_mul(1_000_000)?
        .checked_add(micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Option<UpdateRecord>, String> {
        parse_line(s.as_bytes())
    }

    #[test]
    fn all_line_forms_parse() {
        let a = parse("1546300800 A 45.169.4.0/22 80.77.16.114 80.77.16.115")
            .unwrap()
            .unwrap();
        assert_eq!(a.time_us, 1_546_300_800_000_000);
        assert_eq!(a.peer, Some("80.77.16.114".parse().unwrap()));
        assert_eq!(
            a.kind,
            UpdateKind::Announce {
                next_hop: Some("80.77.16.115".parse().unwrap())
            }
        );
        let w = parse("1.5 W 2a00:ad87:4600::/48 2001:728:1808::2")
            .unwrap()
            .unwrap();
        assert_eq!((w.time_us, w.kind), (1_500_000, UpdateKind::Withdraw));
        let l = parse("1418774413 w 202.70.88.0/21 0.0.0.0")
            .unwrap()
            .unwrap();
        assert_eq!((l.peer, l.kind), (None, UpdateKind::Withdraw));
        assert_eq!(parse("# comment").unwrap(), None);
        assert_eq!(parse("   ").unwrap(), None);
    }

    #[test]
    fn bad_lines_say_why() {
        for (line, want) in [
            ("1 A 10.0.0.1/8 1.2.3.4 1.2.3.4", "host bits"),
            ("1 X 10.0.0.0/8 1.2.3.4", "second field"),
            ("x A 10.0.0.0/8 1.2.3.4", "bad time"),
            ("1.1234567 A 10.0.0.0/8 1.2.3.4", "bad time"),
            ("1 A 10.0.0.0/8", "missing peer"),
            ("1 W 10.0.0.0/8 1.2.3.4 5.6.7.8", "trailing"),
            ("1 A 10.0.0.0/33 1.2.3.4", "bad prefix"),
            ("1 A 10.0.0.0/8 peer", "bad address"),
        ] {
            let err = parse(line).unwrap_err();
            assert!(err.contains(want), "{line}: {err}");
        }
    }

    #[test]
    fn errors_name_the_line() {
        let input = b"1 A 10.0.0.0/8 1.2.3.4 1.2.3.4\n\n2 W 10.0.0.1/8 1.2.3.4\n";
        let err = read_text(&input[..], Path::new("u.txt"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("u.txt:3: host bits"), "{err}");
    }
}
