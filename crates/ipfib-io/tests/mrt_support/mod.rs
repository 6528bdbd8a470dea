//! Helpers shared by the MRT integration tests: locating ../shared/data, reading gzip text.

#![allow(dead_code)]

pub mod bgp;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// A file of the shared data set, or `None` (after saying so) when it is absent.
pub fn data_file(rel: &str) -> Option<PathBuf> {
    ipfib_testdata::shared_file(rel)
}

/// The lines of a gzip-compressed text file.
pub fn gz_lines(path: &Path) -> Vec<String> {
    let file = std::fs::File::open(path).unwrap();
    BufReader::new(flate2::read::MultiGzDecoder::new(file))
        .lines()
        .map(|l| l.unwrap())
        .collect()
}

/// The whole decompressed content of a gzip or bzip2 file.
pub fn decompressed(path: &Path) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap();
    let mut out = Vec::new();
    if path.extension().is_some_and(|e| e == "bz2") {
        bzip2::read::MultiBzDecoder::new(file)
            .read_to_end(&mut out)
            .unwrap();
    } else {
        flate2::read::MultiGzDecoder::new(file)
            .read_to_end(&mut out)
            .unwrap();
    }
    out
}

/// A fresh temporary directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ipfib-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A hand-built MRT stream, for edge cases no real file has.
#[derive(Default)]
pub struct MrtBuilder {
    pub bytes: Vec<u8>,
}

/// One RIB entry (path) of a hand-built TABLE_DUMP_V2 record.
pub struct Entry {
    pub peer: u16,
    /// AS_SEQUENCE segments as `Seq`, AS_SET as `Set`.
    pub path: Vec<Seg>,
    pub next_hop: Option<std::net::IpAddr>,
}

/// An AS path segment of a hand-built entry.
pub enum Seg {
    Seq(Vec<u32>),
    Set(Vec<u32>),
}

impl MrtBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a record; returns its offset.
    pub fn record(&mut self, kind: u16, subtype: u16, body: &[u8]) -> u64 {
        let offset = self.bytes.len() as u64;
        self.bytes.extend(1_600_000_000u32.to_be_bytes());
        self.bytes.extend(kind.to_be_bytes());
        self.bytes.extend(subtype.to_be_bytes());
        self.bytes.extend((body.len() as u32).to_be_bytes());
        self.bytes.extend(body);
        offset
    }

    /// A TABLE_DUMP_V2 PEER_INDEX_TABLE (4-byte ASes).
    pub fn peer_table(&mut self, peers: &[(&str, u32)]) -> u64 {
        let mut b = vec![192, 0, 2, 254, 0, 0];
        b.extend((peers.len() as u16).to_be_bytes());
        for (ip, asn) in peers {
            let ip: std::net::IpAddr = ip.parse().unwrap();
            match ip {
                std::net::IpAddr::V4(a) => {
                    b.push(0x02);
                    b.extend([10, 0, 0, 1]);
                    b.extend(a.octets());
                }
                std::net::IpAddr::V6(a) => {
                    b.push(0x03);
                    b.extend([10, 0, 0, 1]);
                    b.extend(a.octets());
                }
            }
            b.extend(asn.to_be_bytes());
        }
        self.record(13, 1, &b)
    }

    /// A RIB_IPV4_UNICAST or RIB_IPV6_UNICAST record; `declared` overrides the entry count.
    pub fn rib(&mut self, prefix: &str, entries: &[Entry], declared: Option<u16>) -> u64 {
        let (addr, len) = prefix.split_once('/').unwrap();
        let ip: std::net::IpAddr = addr.parse().unwrap();
        let bits = match ip {
            std::net::IpAddr::V4(a) => a.octets().to_vec(),
            std::net::IpAddr::V6(a) => a.octets().to_vec(),
        };
        let (len, v6) = (len.parse::<u8>().unwrap(), ip.is_ipv6());
        let mut b = 0u32.to_be_bytes().to_vec();
        b.push(len);
        b.extend(&bits[..usize::from(len).div_ceil(8)]);
        b.extend(declared.unwrap_or(entries.len() as u16).to_be_bytes());
        for e in entries {
            b.extend(e.peer.to_be_bytes());
            b.extend(0u32.to_be_bytes());
            let attrs = attributes(e, v6);
            b.extend((attrs.len() as u16).to_be_bytes());
            b.extend(attrs);
        }
        self.record(13, if v6 { 4 } else { 2 }, &b)
    }

    /// Writes the stream to `dir/name`.
    pub fn write(&self, dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, &self.bytes).unwrap();
        path
    }
}

/// ORIGIN IGP, AS_PATH (4-byte ASes), and the next hop: NEXT_HOP for IPv4, the abbreviated
/// MP_REACH_NLRI of RFC 6396 §4.3.4 for IPv6.
fn attributes(e: &Entry, v6: bool) -> Vec<u8> {
    let mut a = vec![0x40, 1, 1, 0];
    let mut path = Vec::new();
    for s in &e.path {
        let (t, v) = match s {
            Seg::Set(v) => (1u8, v),
            Seg::Seq(v) => (2u8, v),
        };
        path.push(t);
        path.push(v.len() as u8);
        for asn in v {
            path.extend(asn.to_be_bytes());
        }
    }
    a.extend([0x40, 2, path.len() as u8]);
    a.extend(path);
    match (e.next_hop, v6) {
        (None, _) => {}
        (Some(std::net::IpAddr::V4(nh)), false) => {
            a.extend([0x40, 3, 4]);
            a.extend(nh.octets());
        }
        (Some(std::net::IpAddr::V6(nh)), true) => {
            a.extend([0x80, 14, 17, 16]);
            a.extend(nh.octets());
        }
        _ => panic!("next hop family must match the prefix"),
    }
    a
}

/// Offsets of every record of a decompressed MRT stream, from the headers' lengths alone
/// (no ET types, no quirks): an independent framing for tests.
pub fn record_offsets(stream: &[u8]) -> Vec<u64> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at + 12 <= stream.len() {
        out.push(at as u64);
        let len = u32::from_be_bytes(stream[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 12 + len;
    }
    assert_eq!(at, stream.len(), "stream does not frame cleanly");
    out
}
