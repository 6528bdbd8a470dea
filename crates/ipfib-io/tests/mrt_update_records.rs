//! Malformed UPDATEs inside MRT update streams, hand-built: each is an error naming the byte
//! offset of its record (strict), or is skipped whole and counted (`skip_bad_records`) while
//! the valid records around it are applied in full. And the deprecated type 5 (BGP) records
//! and the record kinds that carry no route change.

#![cfg(feature = "mrt")]

mod mrt_support;

use std::io::Cursor;
use std::net::IpAddr;
use std::path::Path;

use ipfib_io::updates::read_updates_from;
use ipfib_io::{UpdateKind, UpdateRecord, UpdateReport};
use mrt_support::bgp::*;
use mrt_support::MrtBuilder;

const PEER: [u8; 4] = [192, 0, 2, 1];
/// BGP4MP_MESSAGE_AS4.
const AS4: u16 = 4;

fn read(stream: &[u8], skip: bool) -> Result<(Vec<UpdateRecord>, UpdateReport), String> {
    let input = Box::new(Cursor::new(stream.to_vec()));
    read_updates_from(input, Path::new("u.mrt"), skip).map_err(|e| e.to_string())
}

/// (prefix, withdrawn?) of each update.
fn changes(records: &[UpdateRecord]) -> Vec<(String, bool)> {
    records
        .iter()
        .map(|r| (r.prefix.to_string(), r.kind == UpdateKind::Withdraw))
        .collect()
}

/// The malformed UPDATEs of issue #32, each with a valid part that bgpkit-parser alone would
/// apply (or apply without its next hop).
fn malformed() -> Vec<(&'static str, Update, &'static str)> {
    let nh6: std::net::Ipv6Addr = "2001:db8::1".parse().unwrap();
    vec![
        (
            "ipv4 nlri /33",
            {
                let mut u = Update::announce_v4(&["172.16.0.0/12"], PEER);
                u.nlri.extend(raw_prefix(33, &[10, 1, 2, 3, 4]));
                u
            },
            "prefix length 33 in the NLRI (at most 32)",
        ),
        (
            "mp_reach ipv6 /129",
            {
                let mut u = announce_v6(&[]);
                let mut nlri = prefix("2001:db8:5::/48");
                nlri.extend(raw_prefix(129, &[0x20; 17]));
                u.attrs = origin_and_path();
                u.attrs.extend(mp_reach(2, 1, &nh6.octets(), &nlri));
                u
            },
            "prefix length 129 in MP_REACH_NLRI (at most 128)",
        ),
        (
            "nlri past the end",
            {
                let mut u = Update::announce_v4(&["172.16.0.0/12"], PEER);
                u.nlri.extend(raw_prefix(24, &[10, 1]));
                u
            },
            "a /24 prefix in the NLRI needs 3 bytes but only 2 are left",
        ),
        (
            "next_hop of 3 bytes",
            {
                let mut u = Update::announce_v4(&["172.16.0.0/12"], PEER);
                u.attrs = origin_and_path();
                u.attrs.extend(attr(0x40, 3, &[192, 0, 2]));
                u
            },
            "NEXT_HOP attribute of 3 bytes (must be 4)",
        ),
        (
            "mp_reach next hop of 7 bytes",
            {
                let mut u = announce_v6(&[]);
                u.attrs = origin_and_path();
                u.attrs
                    .extend(mp_reach(2, 1, &[0x20; 7], &prefix("2001:db8:5::/48")));
                u
            },
            "MP_REACH_NLRI next hop of 7 bytes for AFI 2 SAFI 1",
        ),
        (
            "withdrawal list with one bad entry",
            {
                let mut u = Update::withdraw_v4(&["10.0.0.0/8", "192.0.2.0/24"]);
                u.withdrawn.extend(raw_prefix(40, &[1, 2, 3, 4, 5]));
                u
            },
            "prefix length 40 in the withdrawn routes",
        ),
        (
            "announcement without next hop",
            {
                let mut u = Update::announce_v4(&["172.16.0.0/12"], PEER);
                u.attrs = origin_and_path();
                u
            },
            "NLRI announced without a NEXT_HOP attribute",
        ),
    ]
}

/// A stream of: a valid announcement of 10/8, the record under test, a valid withdrawal of
/// 10/8 and announcement of 192.0.2.0/24. Returns the stream and the test record's offset.
fn around(kind: u16, subtype: u16, body: &[u8]) -> (Vec<u8>, u64) {
    let mut b = MrtBuilder::new();
    let first = Update::announce_v4(&["10.0.0.0/8"], PEER).body();
    b.record(16, AS4, &bgp4mp_as4(PEER, &first));
    let at = b.record(kind, subtype, body);
    let mut last = Update::announce_v4(&["192.0.2.0/24"], PEER);
    last.withdrawn = prefix("10.0.0.0/8");
    b.record(16, AS4, &bgp4mp_as4(PEER, &last.body()));
    (b.bytes, at)
}

fn neighbours() -> Vec<(String, bool)> {
    vec![
        ("10.0.0.0/8".into(), false),
        ("10.0.0.0/8".into(), true),
        ("192.0.2.0/24".into(), false),
    ]
}

fn check_case(name: &str, stream: &[u8], at: u64, reason: &str) {
    let err = read(stream, false).unwrap_err();
    assert!(
        err.starts_with(&format!("u.mrt: at byte offset {at}: malformed BGP UPDATE")),
        "{name}: {err}"
    );
    assert!(err.contains(reason), "{name}: {err}");
    let (records, report) = read(stream, true).unwrap();
    assert_eq!(report.skipped, 1, "{name}");
    assert_eq!(
        changes(&records),
        neighbours(),
        "{name}: nothing of it applied"
    );
}

#[test]
fn malformed_updates_in_bgp4mp_are_errors_or_counted_skips() {
    for (name, update, reason) in malformed() {
        let (stream, at) = around(16, AS4, &bgp4mp_as4(PEER, &update.body()));
        check_case(name, &stream, at, reason);
    }
}

#[test]
fn malformed_updates_in_type_5_records_are_errors_or_counted_skips() {
    for (name, update, reason) in malformed() {
        let (stream, at) = around(5, 1, &legacy_update(PEER, &update.body()));
        check_case(name, &stream, at, reason);
    }
}

#[test]
fn the_error_names_the_bad_bytes_in_the_stream() {
    // Record at 0 (12-byte header); BGP4MP_AS4 envelope 20 bytes, BGP header 19: the UPDATE
    // body at 51; its NLRI after 2 + 0 + 2 + attributes.
    let mut u = Update::announce_v4(&[], PEER);
    u.nlri = raw_prefix(33, &[1, 2, 3, 4, 5]);
    let mut b = MrtBuilder::new();
    b.record(16, AS4, &bgp4mp_as4(PEER, &u.body()));
    let nlri_at = 51 + 4 + u.attrs.len();
    let err = read(&b.bytes, false).unwrap_err();
    assert!(
        err.contains(&format!(
            "at byte offset {nlri_at} (byte {} of the UPDATE)",
            nlri_at - 51
        )),
        "{err}"
    );
}

#[test]
fn add_path_subtypes_check_prefixes_after_their_path_identifier() {
    // BGP4MP_MESSAGE_AS4_ADDPATH: path id 7, then 10/8; then a /33.
    let mut u = Update::announce_v4(&[], PEER);
    u.nlri = [0, 0, 0, 7]
        .into_iter()
        .chain(prefix("10.0.0.0/8"))
        .collect();
    let mut b = MrtBuilder::new();
    b.record(16, 9, &bgp4mp_as4(PEER, &u.body()));
    let (records, _) = read(&b.bytes, false).unwrap();
    assert_eq!(changes(&records), [("10.0.0.0/8".to_string(), false)]);
    u.nlri.extend([0, 0, 0, 8, 33, 1, 2, 3, 4, 5]);
    let mut b = MrtBuilder::new();
    b.record(16, 9, &bgp4mp_as4(PEER, &u.body()));
    let err = read(&b.bytes, false).unwrap_err();
    assert!(err.contains("prefix length 33"), "{err}");
}

#[test]
fn a_hand_built_type_5_update_is_read() {
    let mut u = Update::announce_v4(&["10.0.0.0/8", "192.0.2.0/24"], [198, 51, 100, 7]);
    u.withdrawn = prefix("172.16.0.0/12");
    let mut b = MrtBuilder::new();
    b.record(5, 1, &legacy_update(PEER, &u.body()));
    let (records, report) = read(&b.bytes, false).unwrap();
    assert_eq!(report.records, 1);
    assert_eq!(
        changes(&records),
        [
            ("172.16.0.0/12".to_string(), true),
            ("10.0.0.0/8".to_string(), false),
            ("192.0.2.0/24".to_string(), false),
        ]
    );
    let peer = IpAddr::from(PEER);
    assert!(records.iter().all(|r| r.peer == Some(peer)));
    assert!(records.iter().all(|r| r.time_us == 1_600_000_000_000_000));
    assert_eq!(
        records[1].kind,
        UpdateKind::Announce {
            next_hop: Some(IpAddr::from([198, 51, 100, 7]))
        }
    );
    // A record shorter than the 12-byte type 5 header.
    let mut b = MrtBuilder::new();
    b.record(5, 1, &[0; 11]);
    let err = read(&b.bytes, false).unwrap_err();
    assert!(err.contains("shorter than its 12-byte header"), "{err}");
}

/// Records without route changes are counted by reason; records that would carry changes
/// but are not read are errors, never silently dropped.
#[test]
fn every_record_kind_is_applied_counted_or_refused() {
    let keepalive = {
        let mut m = bgp4mp_as4(PEER, &[]);
        m.truncate(20);
        m.extend([0xff; 16]);
        m.extend([0, 19, 4]);
        m
    };
    let update = bgp4mp_as4(PEER, &Update::announce_v4(&["10.0.0.0/8"], PEER).body());
    let mut b = MrtBuilder::new();
    b.record(16, AS4, &keepalive);
    b.record(16, 7, &update); // BGP4MP_MESSAGE_AS4_LOCAL: sent by the collector
    b.record(16, 5, &[0; 20]); // STATE_CHANGE_AS4
    b.record(5, 7, &[0; 12]); // type 5 KEEPALIVE
    b.record(11, 0, b"ospf"); // OSPFv2
    b.record(4, 0, b""); // PEER_DOWN
    b.record(16, AS4, &update);
    let (records, report) = read(&b.bytes, false).unwrap();
    assert_eq!(changes(&records), [("10.0.0.0/8".to_string(), false)]);
    assert_eq!(report.ignored, 6);
    let reasons: Vec<_> = report.ignored_by_reason.into_iter().collect();
    assert_eq!(
        reasons,
        [
            ("BGP state changes", 1),
            ("KEEPALIVE messages", 2),
            ("collector events (MRT START, DIE, I_AM_DEAD, PEER_DOWN)", 1),
            ("messages the collector sent (BGP4MP *_LOCAL subtypes)", 1),
            ("other routing protocols (RIP, IDRP, RIPng, OSPF, IS-IS)", 1),
        ]
    );
    for (kind, subtype, want) in [
        (9u16, 1u16, "BGP4PLUS"),
        (16, 2, "BGP4MP_ENTRY"),
        (16, 12, "unknown BGP4MP subtype 12"),
        (5, 4, "BGP_SYNC"),
    ] {
        let mut b = MrtBuilder::new();
        b.record(16, AS4, &update);
        let at = b.record(kind, subtype, &update);
        let err = read(&b.bytes, false).unwrap_err();
        assert!(
            err.contains(&format!("at byte offset {at}:")) && err.contains(want),
            "{kind}/{subtype}: {err}"
        );
        let (records, report) = read(&b.bytes, true).unwrap();
        assert_eq!((records.len(), report.skipped), (1, 1));
        assert!(report.first_skipped.unwrap().contains(want));
    }
}
