//! Hand-built TABLE_DUMP_V2 files for the cases real dumps rarely show: selection ties, AS_SETs,
//! paths without a next hop, host bits, entries the parser drops, unknown peers, multicast.

#![cfg(feature = "mrt")]

mod mrt_support;

use ipfib_io::LoadError;
use ipfib_io::{load_fib, load_fib_with_report, LoadOptions, PeerChoice, ValueKind};
use mrt_support::{temp_dir, Entry, MrtBuilder, Seg};

fn opts(peer: PeerChoice, value: ValueKind) -> LoadOptions {
    LoadOptions {
        peer,
        value,
        skip_bad_records: false,
        allow_empty: false,
    }
}

fn entry(peer: u16, path: Vec<Seg>, next_hop: Option<&str>) -> Entry {
    Entry {
        peer,
        path,
        next_hop: next_hop.map(|n| n.parse().unwrap()),
    }
}

fn net(s: &str) -> ipnet::IpNet {
    s.parse().unwrap()
}

fn peers(b: &mut MrtBuilder) {
    b.peer_table(&[
        ("192.0.2.1", 64500),
        ("192.0.2.2", 64501),
        ("2001:db8::3", 4_200_000_000),
    ]);
}

#[test]
fn best_path_ties_as_sets_and_values() {
    let mut b = MrtBuilder::new();
    peers(&mut b);
    // Equal lengths: the lower peer index wins although it comes second.
    b.rib(
        "10.1.0.0/16",
        &[
            entry(1, vec![Seg::Seq(vec![64501, 3, 7])], Some("198.51.100.2")),
            entry(0, vec![Seg::Seq(vec![64500, 5, 9])], Some("198.51.100.1")),
        ],
        None,
    );
    // An AS_SET counts one: peer 1's 1+1+1 beats peer 0's four ASes; origin = lowest of set.
    b.rib(
        "10.2.0.0/16",
        &[
            entry(
                0,
                vec![Seg::Seq(vec![64500, 1, 2, 3])],
                Some("198.51.100.1"),
            ),
            entry(
                1,
                vec![Seg::Seq(vec![64501, 6]), Seg::Set(vec![30, 20, 40])],
                Some("198.51.100.2"),
            ),
        ],
        None,
    );
    // The only path has no next hop: no next-hop value, but an origin AS and a peer.
    b.rib(
        "10.3.0.0/16",
        &[entry(0, vec![Seg::Seq(vec![64500, 11])], None)],
        None,
    );
    // IPv6 with the abbreviated MP_REACH next hop; an empty path (origin = the peer's AS).
    b.rib(
        "2001:db8:1::/48",
        &[entry(2, vec![], Some("2001:db8::99"))],
        None,
    );

    let dir = temp_dir("mrt-synth");
    let path = b.write(&dir, "rib.mrt");

    let (fib, report) =
        load_fib_with_report(&path, &opts(PeerChoice::Best, ValueKind::NextHop)).unwrap();
    // Next hops numbered from 1 by first appearance among chosen paths.
    assert_eq!(fib.get(&net("10.1.0.0/16")), Some(1)); // 198.51.100.1
    assert_eq!(fib.get(&net("10.2.0.0/16")), Some(2)); // 198.51.100.2
    assert_eq!(fib.get(&net("10.3.0.0/16")), None);
    assert_eq!(fib.get(&net("2001:db8:1::/48")), Some(3));
    assert_eq!(report.prefixes_without_value, 1);
    assert_eq!(report.paths, 6);
    assert!(report
        .warnings()
        .iter()
        .any(|w| w.contains("left out 1 prefixes")));

    let fib = load_fib(&path, &opts(PeerChoice::Best, ValueKind::OriginAs)).unwrap();
    assert_eq!(fib.get(&net("10.1.0.0/16")), Some(9));
    assert_eq!(fib.get(&net("10.2.0.0/16")), Some(20));
    assert_eq!(fib.get(&net("10.3.0.0/16")), Some(11));
    assert_eq!(fib.get(&net("2001:db8:1::/48")), Some(4_200_000_000));

    let fib = load_fib(&path, &opts(PeerChoice::Best, ValueKind::Peer)).unwrap();
    let values: Vec<u32> = fib
        .v4()
        .iter()
        .map(|(_, v)| v)
        .chain(fib.v6().iter().map(|(_, v)| v))
        .collect();
    assert_eq!(values, [0, 1, 0, 2]);

    // One peer: only its prefixes, its own values.
    let (fib, report) =
        load_fib_with_report(&path, &opts(PeerChoice::Index(1), ValueKind::OriginAs)).unwrap();
    assert_eq!(fib.len(), 2);
    assert_eq!(fib.get(&net("10.1.0.0/16")), Some(7));
    assert_eq!(report.prefixes_not_from_peer, 2);
    let by_ip = load_fib(
        &path,
        &opts(
            PeerChoice::Address("192.0.2.2".parse().unwrap()),
            ValueKind::OriginAs,
        ),
    )
    .unwrap();
    assert_eq!(by_ip, fib);
}

#[test]
fn a_peer_without_unicast_paths_is_an_error() {
    let mut b = MrtBuilder::new();
    peers(&mut b);
    b.rib(
        "10.1.0.0/16",
        &[entry(0, vec![Seg::Seq(vec![1])], Some("198.51.100.1"))],
        None,
    );
    let path = b.write(&temp_dir("mrt-nopaths"), "rib.mrt");
    let err = load_fib(&path, &opts(PeerChoice::Index(2), ValueKind::NextHop))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("peer 2 is a peer of this dump but has no unicast paths"),
        "{err}"
    );
}

#[test]
fn dropped_entries_host_bits_and_unknown_peers_are_errors_or_counted_skips() {
    /// Appends one bad record to a builder and returns its offset.
    type AddBad = fn(&mut MrtBuilder) -> u64;
    let cases: [(&str, AddBad, &str); 3] = [
        (
            "entry count",
            |b| {
                b.rib(
                    "10.1.0.0/16",
                    &[entry(0, vec![Seg::Seq(vec![1])], Some("198.51.100.1"))],
                    Some(2),
                )
            },
            "declares 2 RIB entries but only 1",
        ),
        (
            "host bits",
            |b| {
                b.rib(
                    "10.1.1.0/17",
                    &[entry(0, vec![Seg::Seq(vec![1])], Some("198.51.100.1"))],
                    None,
                )
            },
            "bits set past its length",
        ),
        (
            "peer index",
            |b| {
                b.rib(
                    "10.1.0.0/16",
                    &[entry(7, vec![Seg::Seq(vec![1])], Some("198.51.100.1"))],
                    None,
                )
            },
            "peer index 7",
        ),
    ];
    for (name, bad, message) in cases {
        let mut b = MrtBuilder::new();
        peers(&mut b);
        b.rib(
            "10.0.0.0/16",
            &[entry(0, vec![Seg::Seq(vec![1])], Some("198.51.100.1"))],
            None,
        );
        let offset = bad(&mut b);
        b.rib(
            "10.9.0.0/16",
            &[entry(1, vec![Seg::Seq(vec![2])], Some("198.51.100.2"))],
            None,
        );
        let path = b.write(&temp_dir("mrt-bad"), "rib.mrt");

        match load_fib(&path, &LoadOptions::default()) {
            Err(LoadError::Record {
                offset: o, reason, ..
            }) => {
                assert_eq!(o, offset, "{name}");
                assert!(reason.contains(message), "{name}: {reason}");
            }
            other => panic!("{name}: expected a record error, got {other:?}"),
        }
        let skip = LoadOptions {
            skip_bad_records: true,
            ..LoadOptions::default()
        };
        let (fib, report) = load_fib_with_report(&path, &skip).unwrap();
        assert_eq!(report.skipped_records + report.skipped_paths, 1, "{name}");
        assert_eq!(fib.len(), 2, "{name}: the good records around the bad one");
        assert_eq!(fib.get(&net("10.9.0.0/16")), Some(2));
    }
}

#[test]
fn multicast_ribs_are_left_out_and_counted() {
    let mut b = MrtBuilder::new();
    peers(&mut b);
    b.rib(
        "10.1.0.0/16",
        &[entry(0, vec![Seg::Seq(vec![1])], Some("198.51.100.1"))],
        None,
    );
    // The same body as a RIB_IPV4_MULTICAST record (subtype 3).
    let unicast = b.bytes.clone();
    let start = unicast.len();
    b.rib(
        "10.2.0.0/16",
        &[entry(0, vec![Seg::Seq(vec![1])], Some("198.51.100.1"))],
        None,
    );
    b.bytes[start + 6..start + 8].copy_from_slice(&3u16.to_be_bytes());
    let path = b.write(&temp_dir("mrt-mcast"), "rib.mrt");
    let (fib, report) = load_fib_with_report(&path, &LoadOptions::default()).unwrap();
    assert_eq!(fib.len(), 1);
    assert_eq!(report.ignored_records, 1);
}
