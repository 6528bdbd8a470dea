//! `ipfib gen fib`, `ipfib gen trace` and `ipfib gen pcap` end to end.

mod common;

use std::net::IpAddr;
use std::path::Path;

use common::{ipfib, write_file};
use ipfib::{Intervals, Prefix};
use ipfib_gen::TraceKind;

#[test]
fn generated_file_is_the_library_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.txt.gz");
    let path = path.to_str().unwrap();
    let out = ipfib(
        &[
            "gen",
            "fib",
            "--family",
            "6",
            "--prefixes",
            "2000",
            "--seed",
            "3",
            "--out",
            path,
        ],
        None,
    );
    assert!(out.success, "{}", out.stderr);
    let fib = ipfib_io::load_fib(Path::new(path), &ipfib_io::LoadOptions::default()).unwrap();
    assert!(fib.v4().is_empty());
    assert_eq!(fib.v6(), &ipfib_gen::fib_v6(2000, 3));
}

#[test]
fn fib_to_stdout() {
    let out = ipfib(&["gen", "fib", "--family", "4", "--prefixes", "50"], None);
    assert!(out.success, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 50);
    for line in lines {
        let (net, nh) = line.split_once(' ').unwrap();
        assert!(
            Prefix::<u32>::from_net(net.parse().unwrap()).is_ok(),
            "{line}"
        );
        assert!(nh.parse::<u32>().is_ok(), "{line}");
    }
}

#[test]
fn trace_hits_the_table_and_matches_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.txt");
    let path = path.to_str().unwrap();
    assert!(
        ipfib(
            &[
                "gen",
                "fib",
                "--family",
                "4",
                "--prefixes",
                "3000",
                "--out",
                path
            ],
            None
        )
        .success
    );
    let out = ipfib(
        &[
            "gen", "trace", "--fib", path, "--kind", "uniform", "--count", "500", "--seed", "4",
        ],
        None,
    );
    assert!(out.success, "{}", out.stderr);
    let table = ipfib_gen::fib_v4(3000, 1);
    let iv = Intervals::from_table(&table);
    let addrs: Vec<u32> = out
        .stdout
        .lines()
        .map(|l| match l.parse::<IpAddr>().unwrap() {
            IpAddr::V4(a) => u32::from(a),
            IpAddr::V6(a) => panic!("IPv6 address {a} in an IPv4 trace"),
        })
        .collect();
    assert_eq!(addrs, ipfib_gen::trace(&table, TraceKind::Uniform, 500, 4));
    assert!(addrs.iter().all(|&a| iv.lookup(a).is_some()));
}

#[test]
fn trace_defaults_to_the_larger_family() {
    let dir = tempfile::tempdir().unwrap();
    let fib = write_file(
        dir.path(),
        "mixed.txt",
        b"10.0.0.0/8 1\n192.0.2.0/24 2\n2001:db8::/32 3\n",
    );
    let out = ipfib(
        &[
            "gen", "trace", "--fib", &fib, "--kind", "matched", "--count", "20",
        ],
        None,
    );
    assert!(out.success, "{}", out.stderr);
    assert!(
        out.stdout
            .lines()
            .all(|l| l.parse::<std::net::Ipv4Addr>().is_ok()),
        "{}",
        out.stdout
    );
    let out = ipfib(
        &[
            "gen", "trace", "--fib", &fib, "--kind", "matched", "--count", "5", "--family", "6",
        ],
        None,
    );
    assert!(out.success, "{}", out.stderr);
    assert!(
        out.stdout.lines().all(|l| l.starts_with("2001:db8:")),
        "{}",
        out.stdout
    );
}

#[test]
fn errors_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let v4_only = write_file(dir.path(), "v4.txt", b"10.0.0.0/8 1\n");
    let out = ipfib(
        &[
            "gen", "trace", "--fib", &v4_only, "--kind", "matched", "--count", "5", "--family", "6",
        ],
        None,
    );
    assert!(!out.success);
    assert!(
        out.stderr.contains("v4.txt") && out.stderr.contains("no routes"),
        "{}",
        out.stderr
    );

    let out = ipfib(
        &[
            "gen", "trace", "--fib", &v4_only, "--kind", "zipf", "--count", "5",
        ],
        None,
    );
    assert!(!out.success);
    assert!(out.stderr.contains("zipf"), "{}", out.stderr);

    let out = ipfib(&["gen", "fib", "--family", "5", "--prefixes", "5"], None);
    assert!(!out.success);
    assert!(out.stderr.contains("family"), "{}", out.stderr);

    let missing = dir.path().join("missing.txt");
    let out = ipfib(
        &[
            "gen",
            "trace",
            "--fib",
            missing.to_str().unwrap(),
            "--kind",
            "space",
            "--count",
            "1",
        ],
        None,
    );
    assert!(!out.success);
    assert!(out.stderr.contains("missing.txt"), "{}", out.stderr);

    let out = ipfib(
        &[
            "gen",
            "fib",
            "--family",
            "4",
            "--prefixes",
            "5",
            "--out",
            dir.path().join("no/such/dir.txt").to_str().unwrap(),
        ],
        None,
    );
    assert!(!out.success);
    assert!(out.stderr.contains("dir.txt"), "{}", out.stderr);
}

/// `gen pcap`: one frame per destination, the library's traces interleaved by the share, every
/// destination inside a route (matched), and bad arguments refused with a reason.
#[test]
fn pcap_frames_carry_the_library_traces() {
    use etherparse::{NetSlice, SlicedPacket};
    use ipfib_gen::packets::{interleave, Destination};

    let dir = tempfile::tempdir().unwrap();
    let table = write_file(
        dir.path(),
        "t.txt",
        b"10.0.0.0/8 1\n192.0.2.0/24 2\n2001:db8::/32 3\n2001:db8:1::/48 4\n",
    );
    let table = table.as_str();
    let pcap = dir.path().join("p.pcap");
    let pcap_arg = pcap.to_str().unwrap();
    let args = [
        "gen",
        "pcap",
        "--fib",
        table,
        "--kind",
        "matched",
        "--count",
        "1000",
        "--v6-share",
        "0.3",
        "--seed",
        "5",
        "--out",
        pcap_arg,
    ];
    let out = ipfib(&args, None);
    assert!(out.success, "{}", out.stderr);

    let loaded = ipfib_io::load_fib(Path::new(table), &ipfib_io::LoadOptions::default()).unwrap();
    let v4 = ipfib_gen::try_trace(loaded.v4(), TraceKind::Matched, 700, 5).unwrap();
    let v6 = ipfib_gen::try_trace(loaded.v6(), TraceKind::Matched, 300, 6).unwrap();
    let want = interleave(&v4, &v6);

    let bytes = std::fs::read(&pcap).unwrap();
    let mut reader = pcap_file::pcap::PcapReader::new(&bytes[..]).unwrap();
    let mut seen = Vec::new();
    while let Some(packet) = reader.next_packet() {
        let packet = packet.unwrap();
        assert_eq!(packet.data.len(), 64);
        let sliced = SlicedPacket::from_ethernet(&packet.data).unwrap();
        let dest = match sliced.net.unwrap() {
            NetSlice::Ipv4(ip) => Destination::V4(u32::from(ip.header().destination_addr())),
            NetSlice::Ipv6(ip) => Destination::V6(u128::from(ip.header().destination_addr())),
            other => panic!("not IP: {other:?}"),
        };
        let ip = match dest {
            Destination::V4(a) => IpAddr::from(std::net::Ipv4Addr::from(a)),
            Destination::V6(a) => IpAddr::from(std::net::Ipv6Addr::from(a)),
        };
        assert!(loaded.longest_match(ip).is_some(), "{ip} is in no route");
        seen.push(dest);
    }
    assert_eq!(seen, want);

    // The same arguments give the same file.
    let again = dir.path().join("q.pcap");
    let mut args2 = args;
    args2[13] = again.to_str().unwrap();
    assert!(ipfib(&args2, None).success);
    assert_eq!(std::fs::read(&again).unwrap(), bytes);

    for (bad, says) in [
        (&["--v6-share", "1.5"][..], "between 0 and 1"),
        (&["--frame-len", "40"][..], "40 bytes"),
    ] {
        let mut a = vec![
            "gen", "pcap", "--fib", table, "--kind", "matched", "--count", "5",
        ];
        a.extend_from_slice(bad);
        a.extend_from_slice(&["--out", pcap_arg]);
        let out = ipfib(&a, None);
        assert!(
            !out.success && out.stderr.contains(says),
            "{bad:?}: {}",
            out.stderr
        );
    }
    let v4_only = write_file(dir.path(), "v4.txt", b"10.0.0.0/8 1\n");
    let out = ipfib(
        &[
            "gen",
            "pcap",
            "--fib",
            &v4_only,
            "--kind",
            "matched",
            "--count",
            "5",
            "--v6-share",
            "1",
            "--out",
            pcap_arg,
        ],
        None,
    );
    assert!(
        !out.success && out.stderr.contains("IPv6 destinations"),
        "{}",
        out.stderr
    );
}
