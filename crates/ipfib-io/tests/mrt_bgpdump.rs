//! The MRT reader against `bgpdump -m` golden outputs: every path of every RIB file that has
//! one, compared field by field (type, time, peer, prefix, path id, AS path, origin, next hop).

#![cfg(feature = "mrt")]

mod mrt_support;

use ipfib_io::mrt::RibReader;
use mrt_support::{data_file, gz_lines};

/// The fields of a `bgpdump -m` line that the reader reproduces, by name.
fn expected_fields(line: &str) -> Vec<(&'static str, String)> {
    let f: Vec<&str> = line.split('|').collect();
    let (kind, add_path) = (f[0], f[0] == "TABLE_DUMP2_AP");
    let mut out = vec![
        ("type", kind.to_string()),
        ("time", f[1].to_string()),
        ("peer_ip", f[3].to_string()),
        ("peer_as", f[4].to_string()),
        ("prefix", f[5].to_string()),
    ];
    let rest = if add_path {
        out.push(("path_id", f[6].to_string()));
        &f[7..]
    } else {
        &f[6..]
    };
    out.push(("as_path", rest[0].to_string()));
    out.push(("origin", rest[1].to_string()));
    out.push(("next_hop", rest[2].to_string()));
    out
}

fn compare(rib: &str, expected: &str) {
    let (Some(rib), Some(expected)) = (data_file(rib), data_file(expected)) else {
        return;
    };
    let lines = gz_lines(&expected);
    let reader = RibReader::open(&rib, false).unwrap();
    let v1 = reader.report().format == ipfib_io::FileFormat::MrtTableDump;
    let routes: Vec<_> = reader.map(|r| r.unwrap()).collect();
    assert_eq!(
        routes.len(),
        lines.len(),
        "{}: number of paths",
        rib.display()
    );
    let mut mismatches = Vec::new();
    for (i, (route, line)) in routes.iter().zip(&lines).enumerate() {
        let kind = match (v1, route.path_id) {
            (true, _) => "TABLE_DUMP",
            (false, None) => "TABLE_DUMP2",
            (false, Some(_)) => "TABLE_DUMP2_AP",
        };
        // bgpdump prints placeholders for absent attributes: INCOMPLETE for a missing ORIGIN,
        // 255.255.255.255 (INADDR_NONE) for a missing next hop. The lab ADD-PATH files have
        // both (locally originated routes with no attributes, IPv6 paths with no MP_REACH).
        let origin = route
            .origin
            .map_or("INCOMPLETE".to_string(), |o| o.to_string());
        let next_hop = route
            .next_hop
            .map_or("255.255.255.255".to_string(), |n| n.to_string());
        let ours = [
            kind.to_string(),
            route.timestamp.to_string(),
            route.peer_ip.to_string(),
            route.peer_asn.to_string(),
            route.prefix.to_string(),
        ];
        let mut got: Vec<String> = ours.to_vec();
        if let Some(id) = route.path_id {
            got.push(id.to_string());
        }
        got.extend([route.as_path_string(), origin, next_hop]);
        for ((name, want), got) in expected_fields(line).iter().zip(&got) {
            if want != got {
                mismatches.push(format!(
                    "line {}: {name}: bgpdump {want:?}, ours {got:?} (record at offset {})",
                    i + 1,
                    route.offset
                ));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{}: {} mismatches, first ones:\n{}",
        rib.display(),
        mismatches.len(),
        mismatches
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn rrc00_2002_table_dump_v1_matches_bgpdump() {
    compare(
        "mrt/rib/rrc00.bview.20020722.2337.gz",
        "mrt/expected/bgpdump-bview.20020722.2337.gz.bgpdump-m.txt.gz",
    );
}

#[test]
fn stream_overflow_table_dump_v2_matches_bgpdump() {
    compare(
        "mrt/rib/bgpdump-bview.64k_stream_overflow.gz",
        "mrt/expected/bgpdump-bview.64k_stream_overflow.gz.bgpdump-m.txt.gz",
    );
}

#[test]
fn ipv4_add_path_matches_bgpdump() {
    compare(
        "mrt/rib/bgpdump-bview.ipv4_unicast_add_path.gz",
        "mrt/expected/bgpdump-bview.ipv4_unicast_add_path.gz.bgpdump-m.txt.gz",
    );
}

#[test]
fn ipv6_add_path_matches_bgpdump() {
    compare(
        "mrt/rib/bgpdump-bview.ipv6_unicast_add_path.gz",
        "mrt/expected/bgpdump-bview.ipv6_unicast_add_path.gz.bgpdump-m.txt.gz",
    );
}
