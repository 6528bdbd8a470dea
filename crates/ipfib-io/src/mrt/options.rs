//! How a multi-path RIB becomes a one-next-hop-per-prefix table, and what a load reports.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// Which path of a prefix goes into the table.
///
/// A RIB dump holds every peer's path for a prefix; a FIB holds one. The default is the
/// **best path**: the shortest AS_PATH (an AS_SET counts as one hop, confederation segments as
/// none), ties going to the lowest peer index, then to the first path in the file. That is the
/// rule the best-path tables of the shared data set were made with, and it needs nothing the
/// dump does not carry (no local policy, no IGP metrics).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PeerChoice {
    /// The best path over all peers (see above).
    #[default]
    Best,
    /// Only this peer's paths, by peer index: the position in the TABLE_DUMP_V2
    /// PEER_INDEX_TABLE, or for TABLE_DUMP v1 (which has no peer table) the order in which peer
    /// addresses first appear in the file, from 0. If the peer sent several paths for a prefix
    /// (ADD-PATH), the best of them by the rule above.
    Index(u16),
    /// Only the paths of the peer with this address (all of its indices if it has several).
    Address(IpAddr),
}

impl FromStr for PeerChoice {
    type Err = String;

    /// `best`, a peer index (`0`..=`65535`) or a peer address.
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s == "best" {
            return Ok(PeerChoice::Best);
        }
        if let Ok(index) = s.parse::<u16>() {
            return Ok(PeerChoice::Index(index));
        }
        s.parse::<IpAddr>().map(PeerChoice::Address).map_err(|_| {
            format!("{s:?} is not `best`, a peer index (0-65535) or a peer IP address")
        })
    }
}

impl fmt::Display for PeerChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerChoice::Best => f.write_str("best"),
            PeerChoice::Index(i) => write!(f, "{i}"),
            PeerChoice::Address(a) => write!(f, "{a}"),
        }
    }
}

/// What number a chosen path becomes in the table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ValueKind {
    /// An id for the path's BGP next hop (IPv4: the NEXT_HOP attribute, else the MP_REACH next
    /// hop; IPv6: the global MP_REACH next hop). Ids are dense and start at **1**, assigned in
    /// the order the next hops first appear among the chosen paths, prefixes taken in file
    /// order; 0 is never used, as in the shared text tables. Paths without a next hop are not
    /// candidates.
    #[default]
    NextHop,
    /// The origin AS, for IP-to-AS lookups: the last AS of the AS path (AS4_PATH merged in).
    /// When the path ends in an AS_SET, the lowest AS of the set; when the path is empty (the
    /// peer originated the route itself), the peer's AS.
    OriginAs,
    /// The peer index the path came from (see [`PeerChoice::Index`]).
    Peer,
}

impl ValueKind {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ValueKind::NextHop => "next-hop",
            ValueKind::OriginAs => "origin-as",
            ValueKind::Peer => "peer",
        }
    }
}

impl FromStr for ValueKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "next-hop" => Ok(ValueKind::NextHop),
            "origin-as" => Ok(ValueKind::OriginAs),
            "peer" => Ok(ValueKind::Peer),
            other => Err(format!(
                "{other:?} is not a value kind: use next-hop, origin-as or peer"
            )),
        }
    }
}

impl fmt::Display for ValueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Options for [`crate::load_fib`]. Text files use only `allow_empty`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Which path of each prefix (MRT only).
    pub peer: PeerChoice,
    /// What the table's number is (MRT only).
    pub value: ValueKind,
    /// Skip MRT records that cannot be parsed (and repair the early-RIS length bug) instead of
    /// failing; the counts are in the [`LoadReport`]. A record that cannot be framed in the
    /// middle of the file is still an error: nothing after it has a known boundary.
    pub skip_bad_records: bool,
    /// Accept a file that yields no routes (any format). Off by default: such a load is
    /// [`crate::LoadError::Empty`], since an empty table that forwards nothing is almost always
    /// a wrong or broken file.
    pub allow_empty: bool,
}

impl LoadOptions {
    /// The options as a short human-readable string, for headers and messages.
    pub fn describe(&self) -> String {
        format!(
            "peer={} value={}{}{}",
            self.peer,
            self.value,
            if self.skip_bad_records {
                " skip-bad-records"
            } else {
                ""
            },
            if self.allow_empty { " allow-empty" } else { "" }
        )
    }
}

/// The kind of file that was loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// The text format of [`crate::text`].
    Text,
    /// An MRT TABLE_DUMP (v1) RIB dump.
    MrtTableDump,
    /// An MRT TABLE_DUMP_V2 RIB dump.
    MrtTableDumpV2,
    /// An ipfib saved table ([`ipfib::saved`]).
    Saved,
}

impl FileFormat {
    /// A short name for messages and file headers.
    pub fn name(self) -> &'static str {
        match self {
            FileFormat::Text => "text",
            FileFormat::MrtTableDump => "MRT TABLE_DUMP",
            FileFormat::MrtTableDumpV2 => "MRT TABLE_DUMP_V2",
            FileFormat::Saved => "saved table",
        }
    }

    /// True for the MRT formats (where [`LoadOptions`] matter).
    pub fn is_mrt(self) -> bool {
        matches!(self, FileFormat::MrtTableDump | FileFormat::MrtTableDumpV2)
    }
}

/// What a load did besides producing the table: everything a user should know to trust it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadReport {
    /// The format detected from the content.
    pub format: FileFormat,
    /// MRT records read (0 for text).
    pub records: u64,
    /// Paths (RIB entries) read.
    pub paths: u64,
    /// Records skipped as unparsable (only with `skip_bad_records`), an incomplete last record
    /// included.
    pub skipped_records: u64,
    /// Bytes of the decompressed stream in the skipped records (for an incomplete last record,
    /// the bytes of it that were there).
    pub skipped_bytes: u64,
    /// Bytes of the decompressed stream read: the offset where reading stopped.
    pub bytes_read: u64,
    /// The file ended inside a record (only with `skip_bad_records`; without it that is an
    /// error): the offset of that record's first byte. Everything the file should have held
    /// from there on is missing, and how much that is cannot be known.
    pub truncated_at: Option<u64>,
    /// Paths skipped inside otherwise good records (a prefix with host bits set, an unknown peer
    /// index; only with `skip_bad_records`).
    pub skipped_paths: u64,
    /// Records whose early-RIS 4-bytes-short length was repaired (only with `skip_bad_records`).
    pub repaired_records: u64,
    /// Records that are not part of a unicast table and were left out by design: multicast
    /// RIBs, RIB_GENERIC, GEO_PEER_TABLE.
    pub ignored_records: u64,
    /// Prefixes that had paths but none usable for the chosen peer and value (e.g. no next
    /// hop), so they are not in the table.
    pub prefixes_without_value: u64,
    /// Prefixes in the file that the chosen peer has no path for (only with a chosen peer).
    pub prefixes_not_from_peer: u64,
}

impl LoadReport {
    /// A report with only the format set.
    pub fn new(format: FileFormat) -> Self {
        LoadReport {
            format,
            records: 0,
            paths: 0,
            skipped_records: 0,
            skipped_bytes: 0,
            bytes_read: 0,
            truncated_at: None,
            skipped_paths: 0,
            repaired_records: 0,
            ignored_records: 0,
            prefixes_without_value: 0,
            prefixes_not_from_peer: 0,
        }
    }

    /// One line per noteworthy count (skips, repairs, left-out prefixes), for stderr; empty
    /// when there is nothing to warn about.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(at) = self.truncated_at {
            out.push(format!(
                "TRUNCATED: the file ends inside the MRT record at byte offset {at} (reading \
                 stopped at byte {}, {} bytes into that record); that record and everything \
                 after it are missing, so the table is incomplete",
                self.bytes_read,
                self.bytes_read.saturating_sub(at)
            ));
        }
        if self.skipped_records > 0 {
            out.push(format!(
                "skipped {} unreadable MRT record{} ({} bytes of {} read{})",
                self.skipped_records,
                if self.skipped_records == 1 { "" } else { "s" },
                self.skipped_bytes,
                self.bytes_read,
                if self.truncated_at.is_some() {
                    ", the incomplete last record included"
                } else {
                    ""
                }
            ));
        }
        if self.skipped_paths > 0 {
            out.push(format!("skipped {} bad RIB entries", self.skipped_paths));
        }
        if self.repaired_records > 0 {
            out.push(format!(
                "repaired {} TABLE_DUMP records with the early-RIS 4-bytes-short length",
                self.repaired_records
            ));
        }
        if self.prefixes_without_value > 0 {
            out.push(format!(
                "left out {} prefixes that have no usable path for this value kind",
                self.prefixes_without_value
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_choice_parses_every_form() {
        assert_eq!("best".parse::<PeerChoice>(), Ok(PeerChoice::Best));
        assert_eq!("7".parse::<PeerChoice>(), Ok(PeerChoice::Index(7)));
        assert_eq!(
            "2001:db8::1".parse::<PeerChoice>(),
            Ok(PeerChoice::Address("2001:db8::1".parse().unwrap()))
        );
        assert_eq!(
            "192.0.2.1".parse::<PeerChoice>(),
            Ok(PeerChoice::Address("192.0.2.1".parse().unwrap()))
        );
        assert!("70000".parse::<PeerChoice>().is_err());
        assert!("peer1".parse::<PeerChoice>().is_err());
    }

    #[test]
    fn value_kind_round_trips_its_names() {
        for v in [ValueKind::NextHop, ValueKind::OriginAs, ValueKind::Peer] {
            assert_eq!(v.name().parse::<ValueKind>(), Ok(v));
        }
        assert!("nexthop".parse::<ValueKind>().is_err());
    }
}
