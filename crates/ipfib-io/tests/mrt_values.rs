//! `--value` and `--peer` on a real RIB (RIS rrc00, 2002, TABLE_DUMP v1, 36 peers), checked
//! against tables computed here from bgpdump's text output of the same file, so the expected
//! tables come from a different parser than the one under test.

#![cfg(feature = "mrt")]

mod mrt_support;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use ipfib_io::{load_fib_with_report, LoadOptions, LoadReport, PeerChoice, ValueKind};
use mrt_support::{data_file, gz_lines};

const RIB: &str = "mrt/rib/rrc00.bview.20020722.2337.gz";
const BGPDUMP: &str = "mrt/expected/bgpdump-bview.20020722.2337.gz.bgpdump-m.txt.gz";

/// One path as bgpdump printed it.
struct Line {
    peer_ip: String,
    peer_as: u32,
    prefix: String,
    path: Vec<String>,
    next_hop: String,
}

fn parse(line: &str) -> Line {
    let f: Vec<&str> = line.split('|').collect();
    Line {
        peer_ip: f[3].to_string(),
        peer_as: f[4].parse().unwrap(),
        prefix: f[5].to_string(),
        path: f[6].split_whitespace().map(str::to_string).collect(),
        next_hop: f[8].to_string(),
    }
}

/// Path length with bgpdump's notation: a `{a,b}` token is an AS_SET and counts 1.
fn path_len(l: &Line) -> usize {
    l.path.len()
}

fn origin_as(l: &Line) -> u32 {
    match l.path.last() {
        None => l.peer_as,
        Some(t) if t.starts_with('{') => t
            .trim_matches(|c| c == '{' || c == '}')
            .split(',')
            .map(|a| a.parse::<u32>().unwrap())
            .min()
            .unwrap(),
        Some(t) => t.parse().unwrap(),
    }
}

/// The expected table: per prefix (in order of first appearance) the path of the chosen peers
/// with the shortest AS path, ties to the lowest peer index (= order of first appearance of
/// the peer address, for TABLE_DUMP v1), then the value.
fn expected(lines: &[Line], peer: Option<&str>, value: ValueKind) -> BTreeMap<String, u32> {
    let mut peer_index: HashMap<&str, u32> = HashMap::new();
    for l in lines {
        let n = peer_index.len() as u32;
        peer_index.entry(&l.peer_ip).or_insert(n);
    }
    let mut order: Vec<&str> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut best: HashMap<&str, &Line> = HashMap::new();
    for l in lines {
        if seen.insert(&l.prefix) {
            order.push(&l.prefix);
        }
        if peer.is_some_and(|p| p != l.peer_ip) {
            continue;
        }
        let better = match best.get(l.prefix.as_str()) {
            None => true,
            Some(b) => {
                (path_len(l), peer_index[l.peer_ip.as_str()])
                    < (path_len(b), peer_index[b.peer_ip.as_str()])
            }
        };
        if better {
            best.insert(&l.prefix, l);
        }
    }
    let mut hop_ids: HashMap<&str, u32> = HashMap::new();
    let mut out = BTreeMap::new();
    for p in order {
        let Some(l) = best.get(p) else { continue };
        let v = match value {
            ValueKind::NextHop => {
                let n = hop_ids.len() as u32 + 1;
                *hop_ids.entry(&l.next_hop).or_insert(n)
            }
            ValueKind::OriginAs => origin_as(l),
            ValueKind::Peer => peer_index[l.peer_ip.as_str()],
        };
        out.insert(p.to_string(), v);
    }
    out
}

fn ours(rib: &Path, peer: PeerChoice, value: ValueKind) -> (BTreeMap<String, u32>, LoadReport) {
    let options = LoadOptions {
        peer,
        value,
        skip_bad_records: false,
        allow_empty: false,
    };
    let (fib, report) = load_fib_with_report(rib, &options).unwrap();
    assert!(fib.v6().is_empty());
    let table = fib.v4().iter().map(|(p, v)| (p.to_string(), v)).collect();
    (table, report)
}

fn inputs() -> Option<(PathBuf, Vec<Line>)> {
    let rib = data_file(RIB)?;
    let lines = gz_lines(&data_file(BGPDUMP)?)
        .iter()
        .map(|l| parse(l))
        .collect();
    Some((rib, lines))
}

fn assert_same(ours: &BTreeMap<String, u32>, expected: &BTreeMap<String, u32>, what: &str) {
    assert_eq!(ours.len(), expected.len(), "{what}: number of prefixes");
    let diffs: Vec<_> = expected
        .iter()
        .filter(|(p, v)| ours.get(*p) != Some(v))
        .take(10)
        .map(|(p, v)| format!("{p}: expected {v}, ours {:?}", ours.get(p)))
        .collect();
    assert!(diffs.is_empty(), "{what}: {diffs:#?}");
}

#[test]
fn each_value_kind_of_the_best_path() {
    let Some((rib, lines)) = inputs() else { return };
    for value in [ValueKind::NextHop, ValueKind::OriginAs, ValueKind::Peer] {
        let (table, report) = ours(&rib, PeerChoice::Best, value);
        assert_same(&table, &expected(&lines, None, value), value.name());
        assert_eq!(report.paths, lines.len() as u64);
    }
}

#[test]
fn one_peer_by_address_and_by_index() {
    let Some((rib, lines)) = inputs() else { return };
    // The peer that first appears third, and the one with the most paths (the full table).
    let mut first_seen: Vec<&str> = Vec::new();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for l in &lines {
        if !counts.contains_key(l.peer_ip.as_str()) {
            first_seen.push(&l.peer_ip);
        }
        *counts.entry(&l.peer_ip).or_default() += 1;
    }
    let busiest = counts
        .iter()
        .max_by_key(|(_, &n)| n)
        .map(|(p, _)| *p)
        .unwrap();
    for peer in [first_seen[2], busiest] {
        let index = first_seen.iter().position(|p| *p == peer).unwrap() as u16;
        let want = expected(&lines, Some(peer), ValueKind::NextHop);
        let (by_ip, report) = ours(
            &rib,
            PeerChoice::Address(peer.parse().unwrap()),
            ValueKind::NextHop,
        );
        assert_same(&by_ip, &want, &format!("peer {peer}"));
        let all_prefixes = expected(&lines, None, ValueKind::Peer).len();
        assert_eq!(
            report.prefixes_not_from_peer as usize,
            all_prefixes - want.len(),
            "prefixes the peer has no path for"
        );
        let (by_index, _) = ours(&rib, PeerChoice::Index(index), ValueKind::NextHop);
        assert_eq!(by_index, by_ip, "peer {peer} = index {index}");
    }
}

#[test]
fn an_unknown_peer_is_an_error_listing_the_peers() {
    let Some((rib, _)) = inputs() else { return };
    for peer in [
        PeerChoice::Index(36),
        PeerChoice::Address("192.0.2.77".parse().unwrap()),
    ] {
        let options = LoadOptions {
            peer,
            ..LoadOptions::default()
        };
        let err = load_fib_with_report(&rib, &options)
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not a peer of this dump"), "{err}");
        assert!(err.contains("0=193.203.0.1 (AS1853)"), "{err}");
    }
}
