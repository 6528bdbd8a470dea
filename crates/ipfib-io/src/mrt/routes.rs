//! Every path of a RIB dump, one [`RibRoute`] at a time, with the peer it came from.
//!
//! bgpkit-parser decodes record bodies; this module frames them ([`super::frame`]), keeps the
//! peer table, and checks what the parser lets pass quietly (a TABLE_DUMP_V2 record whose
//! entries stop early, a prefix with host bits), so a damaged file is an error that names the
//! offset, or with `skip_bad_records` a counted skip.

use std::collections::HashMap;
use std::fmt;
use std::io::BufRead;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use bgpkit_parser::models::{
    AsPathSegment, AttributeValue, Attributes, Origin as BgpOrigin, TableDumpV2Message,
};
use bgpkit_parser::{parse_table_dump_messages, parse_table_dump_v2_message};
use bytes::Bytes;
use ipnet::IpNet;

use super::frame::{FrameError, Framer, Record};
use super::header::{first_type, types, HEADER_LEN};
use super::options::{FileFormat, LoadReport};
use super::readahead::read_ahead;
use crate::decompress::{display_path, open_maybe_compressed};
use crate::peek;
use crate::LoadError;

/// One segment of an AS path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathSegment {
    /// AS_SEQUENCE: the ASes in order, nearest first.
    Sequence(Vec<u32>),
    /// AS_SET: an unordered set (from aggregation); counts as one hop.
    Set(Vec<u32>),
    /// AS_CONFED_SEQUENCE (RFC 5065); counts as no hop.
    ConfedSequence(Vec<u32>),
    /// AS_CONFED_SET (RFC 5065); counts as no hop.
    ConfedSet(Vec<u32>),
}

/// The ORIGIN attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Learned from an interior protocol.
    Igp,
    /// Learned from EGP.
    Egp,
    /// Learned some other way (e.g. redistribution).
    Incomplete,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Origin::Igp => "IGP",
            Origin::Egp => "EGP",
            Origin::Incomplete => "INCOMPLETE",
        })
    }
}

/// A peer of the collector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerInfo {
    /// The peer's address.
    pub ip: IpAddr,
    /// The peer's AS.
    pub asn: u32,
}

/// One path of one prefix, as the RIB dump has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RibRoute {
    /// Offset of the record in the decompressed stream.
    pub offset: u64,
    /// Timestamp of the record header (the dump time).
    pub timestamp: u32,
    /// The prefix (host bits are always zero: anything else is a bad path).
    pub prefix: IpNet,
    /// ADD-PATH path identifier (RFC 8050 RIB subtypes only).
    pub path_id: Option<u32>,
    /// Peer index: the PEER_INDEX_TABLE position (TABLE_DUMP_V2), or the order of first
    /// appearance of the peer address from 0 (TABLE_DUMP v1).
    pub peer_index: u16,
    /// The peer's address.
    pub peer_ip: IpAddr,
    /// The peer's AS.
    pub peer_asn: u32,
    /// The AS path with AS4_PATH merged in (RFC 6793); empty when the attribute is absent.
    pub as_path: Vec<PathSegment>,
    /// The ORIGIN attribute, if present.
    pub origin: Option<Origin>,
    /// The BGP next hop: for IPv4 prefixes the NEXT_HOP attribute, else the MP_REACH next hop;
    /// for IPv6 the global MP_REACH next hop, else NEXT_HOP.
    pub next_hop: Option<IpAddr>,
}

impl RibRoute {
    /// AS-path length for best-path selection: an AS_SET counts as 1, confederation segments 0.
    pub fn path_len(&self) -> usize {
        self.as_path
            .iter()
            .map(|s| match s {
                PathSegment::Sequence(v) => v.len(),
                PathSegment::Set(_) => 1,
                PathSegment::ConfedSequence(_) | PathSegment::ConfedSet(_) => 0,
            })
            .sum()
    }

    /// The origin AS: the last AS of the path, the lowest AS of a final AS_SET, or the peer's
    /// AS when the path has no (non-confederation) AS at all.
    pub fn origin_as(&self) -> u32 {
        for seg in self.as_path.iter().rev() {
            match seg {
                PathSegment::Sequence(v) => {
                    if let Some(&last) = v.last() {
                        return last;
                    }
                }
                PathSegment::Set(v) => {
                    if let Some(&min) = v.iter().min() {
                        return min;
                    }
                }
                PathSegment::ConfedSequence(_) | PathSegment::ConfedSet(_) => {}
            }
        }
        self.peer_asn
    }

    /// The AS path as bgpdump prints it: sequences space-separated, sets as `{a,b}`,
    /// confederation sequences as `(a b)` and confederation sets as `[a,b]`.
    pub fn as_path_string(&self) -> String {
        let join =
            |v: &[u32], sep: &str| v.iter().map(u32::to_string).collect::<Vec<_>>().join(sep);
        self.as_path
            .iter()
            .map(|s| match s {
                PathSegment::Sequence(v) => join(v, " "),
                PathSegment::Set(v) => format!("{{{}}}", join(v, ",")),
                PathSegment::ConfedSequence(v) => format!("({})", join(v, " ")),
                PathSegment::ConfedSet(v) => format!("[{}]", join(v, ",")),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Reads every path of an MRT RIB dump (TABLE_DUMP or TABLE_DUMP_V2), in file order.
///
/// An iterator of `Result`: after the first `Err` it ends. Unicast IPv4 and IPv6 RIB records
/// give routes; multicast RIBs, RIB_GENERIC and GEO_PEER_TABLE records are counted in
/// [`LoadReport::ignored_records`] and otherwise left out; any other record type is a bad record.
pub struct RibReader {
    path: PathBuf,
    framer: Framer<Box<dyn BufRead + Send>>,
    tolerant: bool,
    /// TABLE_DUMP_V2 peers by index (`None`: index not in the table).
    v2_peers: Vec<Option<PeerInfo>>,
    /// TABLE_DUMP v1 peers in order of first appearance.
    v1_peers: Vec<PeerInfo>,
    v1_index: HashMap<IpAddr, u16>,
    pending: std::vec::IntoIter<RibRoute>,
    report: LoadReport,
    done: bool,
}

impl RibReader {
    /// Opens a RIB dump (plain, gzip or bzip2). Fails when the content is not MRT, or is an
    /// update trace (BGP4MP) rather than a RIB: replaying updates without the table they apply
    /// to would give a partial table that looks complete.
    pub fn open(path: &Path, skip_bad_records: bool) -> Result<Self, LoadError> {
        let input = open_maybe_compressed(path)?;
        Self::from_reader(input, &display_path(path), skip_bad_records)
    }

    /// [`RibReader::open`] on an already decompressed stream; `path` is the name errors use.
    pub fn from_reader(
        input: Box<dyn BufRead + Send>,
        path: &Path,
        skip_bad_records: bool,
    ) -> Result<Self, LoadError> {
        let (head, input) = peek(input, HEADER_LEN).map_err(|source| LoadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let format = match first_type(&head) {
            Some(types::TABLE_DUMP) => FileFormat::MrtTableDump,
            Some(types::TABLE_DUMP_V2) => FileFormat::MrtTableDumpV2,
            Some(types::BGP4MP | types::BGP4MP_ET | types::BGP) => {
                return Err(record_error(
                    path,
                    0,
                    "this is an MRT updates file (BGP4MP or type 5 BGP messages), not a RIB \
                     dump: it holds changes to a table, not the table; give a TABLE_DUMP or \
                     TABLE_DUMP_V2 RIB",
                ))
            }
            Some(other) => {
                return Err(record_error(
                    path,
                    0,
                    format!("MRT type {other} is not a RIB dump (TABLE_DUMP or TABLE_DUMP_V2)"),
                ))
            }
            None => return Err(record_error(path, 0, "not an MRT file")),
        };
        Ok(RibReader {
            path: path.to_path_buf(),
            framer: Framer::new(read_ahead(input)),
            tolerant: skip_bad_records,
            v2_peers: Vec::new(),
            v1_peers: Vec::new(),
            v1_index: HashMap::new(),
            pending: Vec::new().into_iter(),
            report: LoadReport::new(format),
            done: false,
        })
    }

    /// Counts so far (complete once the iterator has ended).
    pub fn report(&self) -> &LoadReport {
        &self.report
    }

    /// Offset of the next unread record (the stream length once the iterator has ended).
    pub fn offset(&self) -> u64 {
        self.framer.offset()
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The peers known so far: the PEER_INDEX_TABLE (TABLE_DUMP_V2; `None` for an index the
    /// table does not define), or the peers seen so far in order of first appearance
    /// (TABLE_DUMP v1).
    pub fn peers(&self) -> Vec<Option<PeerInfo>> {
        match self.report.format {
            FileFormat::MrtTableDump => self.v1_peers.iter().copied().map(Some).collect(),
            _ => self.v2_peers.clone(),
        }
    }

    /// Reads records until one yields routes, the stream ends, or an error.
    fn fill(&mut self) -> Result<bool, LoadError> {
        loop {
            let framed = self.framer.next(self.tolerant);
            self.report.bytes_read = self.framer.offset();
            let record = match framed {
                Ok(Some(r)) => r,
                Ok(None) => return Ok(false),
                Err(FrameError {
                    at_end: true,
                    offset,
                    ..
                }) if self.tolerant => {
                    // The file ends inside this record: count what there was of it, and say
                    // where, so a cut file is never taken for a whole one.
                    self.report.skipped_records += 1;
                    self.report.skipped_bytes += self.framer.offset() - offset;
                    self.report.truncated_at = Some(offset);
                    return Ok(false);
                }
                Err(e) => return Err(record_error(&self.path, e.offset, e.reason)),
            };
            self.report.records += 1;
            if record.repaired {
                self.report.repaired_records += 1;
            }
            let offset = record.offset;
            let size = self.framer.offset() - offset;
            match self.decode(record) {
                Ok(routes) if routes.is_empty() => {}
                Ok(routes) => {
                    self.report.paths += routes.len() as u64;
                    self.pending = routes.into_iter();
                    return Ok(true);
                }
                Err(_) if self.tolerant => {
                    self.report.skipped_records += 1;
                    self.report.skipped_bytes += size;
                }
                Err(reason) => return Err(record_error(&self.path, offset, reason)),
            }
        }
    }

    /// Routes of one record; `Err` is the reason the whole record is bad.
    fn decode(&mut self, record: Record) -> Result<Vec<RibRoute>, String> {
        let Record {
            offset,
            timestamp,
            kind,
            subtype,
            body,
            ..
        } = record;
        match kind {
            types::TABLE_DUMP => self.decode_v1(offset, timestamp, subtype, body),
            types::TABLE_DUMP_V2 => self.decode_v2(offset, timestamp, subtype, body),
            other => Err(format!(
                "MRT type {other} record (subtype {subtype}) inside a RIB dump"
            )),
        }
    }

    fn decode_v1(
        &mut self,
        offset: u64,
        timestamp: u32,
        subtype: u16,
        body: Vec<u8>,
    ) -> Result<Vec<RibRoute>, String> {
        let entries = parse_table_dump_messages(subtype, Bytes::from(body))
            .map_err(|e| format!("TABLE_DUMP record (subtype {subtype}): {e}"))?;
        let mut routes = Vec::with_capacity(entries.len());
        for entry in entries {
            let prefix = entry.prefix.prefix;
            if let Err(reason) = check_prefix(prefix) {
                self.bad_path(reason)?;
                continue;
            }
            let peer = PeerInfo {
                ip: entry.peer_ip,
                asn: entry.peer_asn.to_u32(),
            };
            let peer_index = match self.v1_index.get(&peer.ip) {
                Some(&i) => i,
                None => {
                    let Ok(i) = u16::try_from(self.v1_peers.len()) else {
                        return Err("more than 65536 distinct peers".into());
                    };
                    self.v1_index.insert(peer.ip, i);
                    self.v1_peers.push(peer);
                    i
                }
            };
            routes.push(route(
                offset,
                timestamp,
                prefix,
                None,
                peer_index,
                peer,
                &entry.attributes,
            ));
        }
        Ok(routes)
    }

    fn decode_v2(
        &mut self,
        offset: u64,
        timestamp: u32,
        subtype: u16,
        body: Vec<u8>,
    ) -> Result<Vec<RibRoute>, String> {
        match subtype {
            // PEER_INDEX_TABLE, the unicast RIBs (plain and ADD-PATH): decoded below.
            1 | 2 | 4 | 8 | 10 => {}
            // Multicast RIBs, RIB_GENERIC (other address families), GEO_PEER_TABLE.
            3 | 5 | 6 | 7 | 9 | 11 | 12 => {
                self.report.ignored_records += 1;
                return Ok(Vec::new());
            }
            other => return Err(format!("unknown TABLE_DUMP_V2 subtype {other}")),
        }
        let declared = if subtype == 1 {
            0
        } else {
            declared_entry_count(&body)?
        };
        let message = parse_table_dump_v2_message(subtype, Bytes::from(body))
            .map_err(|e| format!("TABLE_DUMP_V2 record (subtype {subtype}): {e}"))?;
        match message {
            TableDumpV2Message::PeerIndexTable(table) => {
                let len = table.id_peer_map.keys().map(|&i| usize::from(i) + 1).max();
                let mut peers = vec![None; len.unwrap_or(0)];
                for (&i, p) in &table.id_peer_map {
                    peers[usize::from(i)] = Some(PeerInfo {
                        ip: p.peer_ip,
                        asn: p.peer_asn.to_u32(),
                    });
                }
                self.v2_peers = peers;
                Ok(Vec::new())
            }
            TableDumpV2Message::RibAfi(rib) => {
                if rib.rib_entries.len() != declared {
                    return Err(format!(
                        "TABLE_DUMP_V2 record for {} declares {declared} RIB entries but only {} \
                         could be parsed",
                        rib.prefix.prefix,
                        rib.rib_entries.len()
                    ));
                }
                let prefix = rib.prefix.prefix;
                if let Err(reason) = check_prefix(prefix) {
                    self.bad_path(reason)?;
                    return Ok(Vec::new());
                }
                let mut routes = Vec::with_capacity(rib.rib_entries.len());
                for entry in &rib.rib_entries {
                    let peer = self
                        .v2_peers
                        .get(usize::from(entry.peer_index))
                        .copied()
                        .flatten();
                    let Some(peer) = peer else {
                        self.bad_path(format!(
                            "RIB entry for {prefix} names peer index {} but the PEER_INDEX_TABLE \
                             has {} peers",
                            entry.peer_index,
                            self.v2_peers.iter().flatten().count()
                        ))?;
                        continue;
                    };
                    routes.push(route(
                        offset,
                        timestamp,
                        prefix,
                        entry.path_id,
                        entry.peer_index,
                        peer,
                        &entry.attributes,
                    ));
                }
                Ok(routes)
            }
            // Filtered out by subtype above.
            TableDumpV2Message::RibGeneric(_) | TableDumpV2Message::GeoPeerTable(_) => {
                self.report.ignored_records += 1;
                Ok(Vec::new())
            }
        }
    }

    /// A bad path inside a good record: counted when tolerant, else the record's error.
    fn bad_path(&mut self, reason: String) -> Result<(), String> {
        if self.tolerant {
            self.report.skipped_paths += 1;
            Ok(())
        } else {
            Err(reason)
        }
    }
}

impl Iterator for RibReader {
    type Item = Result<RibRoute, LoadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.pending.next() {
                return Some(Ok(r));
            }
            if self.done {
                return None;
            }
            match self.fill() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    return None;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

fn record_error(path: &Path, offset: u64, reason: impl Into<String>) -> LoadError {
    LoadError::Record {
        path: path.to_path_buf(),
        offset,
        reason: reason.into(),
    }
}

fn check_prefix(prefix: IpNet) -> Result<(), String> {
    if prefix.trunc() == prefix {
        Ok(())
    } else {
        Err(format!(
            "prefix {prefix} has bits set past its length (the network is {})",
            prefix.trunc()
        ))
    }
}

/// The entry count a RIB_AFI body declares (RFC 6396 §4.3.2): sequence number, prefix length,
/// the prefix's bytes, then the count. bgpkit-parser stops at the first bad entry without an
/// error, so the count is what proves nothing was dropped.
fn declared_entry_count(body: &[u8]) -> Result<usize, String> {
    let len_at = 4;
    let bits = *body
        .get(len_at)
        .ok_or("TABLE_DUMP_V2 RIB record too short for its prefix")?;
    let count_at = len_at + 1 + usize::from(bits).div_ceil(8);
    match body.get(count_at..count_at + 2) {
        Some(b) => Ok(usize::from(u16::from_be_bytes([b[0], b[1]]))),
        None => Err("TABLE_DUMP_V2 RIB record too short for its entry count".into()),
    }
}

fn route(
    offset: u64,
    timestamp: u32,
    prefix: IpNet,
    path_id: Option<u32>,
    peer_index: u16,
    peer: PeerInfo,
    attributes: &Attributes,
) -> RibRoute {
    let as_path = attributes
        .effective_as_path()
        .map(|p| p.segments.iter().map(segment).collect())
        .unwrap_or_default();
    let origin = attributes.iter().find_map(|v| match v {
        AttributeValue::Origin(BgpOrigin::IGP) => Some(Origin::Igp),
        AttributeValue::Origin(BgpOrigin::EGP) => Some(Origin::Egp),
        AttributeValue::Origin(BgpOrigin::INCOMPLETE) => Some(Origin::Incomplete),
        _ => None,
    });
    let classic = attributes.next_hop();
    let mp = attributes
        .get_reachable_nlri()
        .and_then(|n| n.next_hop)
        .map(|nh| nh.global_addr());
    let next_hop = match prefix {
        IpNet::V4(_) => classic.or(mp),
        IpNet::V6(_) => mp.or(classic),
    };
    RibRoute {
        offset,
        timestamp,
        prefix,
        path_id,
        peer_index,
        peer_ip: peer.ip,
        peer_asn: peer.asn,
        as_path,
        origin,
        next_hop,
    }
}

fn segment(s: &AsPathSegment) -> PathSegment {
    let asns = |v: &[bgpkit_parser::models::Asn]| v.iter().map(|a| a.to_u32()).collect();
    match s {
        AsPathSegment::AsSequence(v) => PathSegment::Sequence(asns(v)),
        AsPathSegment::AsSet(v) => PathSegment::Set(asns(v)),
        AsPathSegment::ConfedSequence(v) => PathSegment::ConfedSequence(asns(v)),
        AsPathSegment::ConfedSet(v) => PathSegment::ConfedSet(asns(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(path: Vec<PathSegment>, peer_asn: u32) -> RibRoute {
        RibRoute {
            offset: 0,
            timestamp: 0,
            prefix: "10.0.0.0/8".parse().unwrap(),
            path_id: None,
            peer_index: 0,
            peer_ip: "192.0.2.1".parse().unwrap(),
            peer_asn,
            as_path: path,
            origin: None,
            next_hop: None,
        }
    }

    #[test]
    fn path_length_counts_a_set_as_one_and_confederations_as_none() {
        let route = r(
            vec![
                PathSegment::ConfedSequence(vec![65001, 65002]),
                PathSegment::Sequence(vec![1, 2, 3]),
                PathSegment::Set(vec![7, 5, 9]),
            ],
            1,
        );
        assert_eq!(route.path_len(), 4);
        assert_eq!(route.origin_as(), 5, "lowest AS of the final set");
        assert_eq!(route.as_path_string(), "(65001 65002) 1 2 3 {7,5,9}");
    }

    #[test]
    fn origin_of_an_empty_path_is_the_peer() {
        assert_eq!(r(vec![], 64512).origin_as(), 64512);
        assert_eq!(
            r(vec![PathSegment::ConfedSet(vec![65001])], 7).origin_as(),
            7
        );
        assert_eq!(r(vec![PathSegment::Sequence(vec![3, 4])], 7).origin_as(), 4);
    }

    #[test]
    fn entry_count_is_read_after_the_prefix() {
        // seq 0, /20 (3 bytes), count 0x0102
        let body = [0, 0, 0, 0, 20, 10, 1, 0, 1, 2];
        assert_eq!(declared_entry_count(&body), Ok(258));
        assert!(declared_entry_count(&body[..8]).is_err());
        assert!(declared_entry_count(&[]).is_err());
    }

    #[test]
    fn host_bits_are_rejected() {
        assert!(check_prefix("10.0.0.0/8".parse().unwrap()).is_ok());
        assert!(check_prefix("10.0.0.1/8".parse().unwrap()).is_err());
    }
}
