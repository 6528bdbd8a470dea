//! The FIB text reader against hand-written files (every error kind names its line) and against
//! every real table in `../shared/data` (route counts from that folder's README).

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use ipfib::{Prefix, Table};
use ipfib_io::text::{read_fib, read_fib_from, write_fib};
use ipfib_io::LoadError;

fn p4(s: &str) -> Prefix<u32> {
    Prefix::from_net(s.parse().unwrap()).unwrap()
}

fn p6(s: &str) -> Prefix<u128> {
    Prefix::from_net(s.parse().unwrap()).unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    path
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn bzip(data: &[u8]) -> Vec<u8> {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

const MIXED: &str = "\
# a hand-written table
10.0.0.0/8 1
10.1.0.0/16\t2   # trailing comment

2001:db8::/32 3
  ::/0 0
0.0.0.0/0 4294967295\r
2001:db8:ffff:ffff::/64 5
192.0.2.1/32 6
";

fn check_mixed(fib: &Table) {
    assert_eq!(fib.v4().len(), 4);
    assert_eq!(fib.v6().len(), 3);
    assert_eq!(fib.v4().get(p4("10.0.0.0/8")), Some(1));
    assert_eq!(fib.v4().get(p4("10.1.0.0/16")), Some(2));
    assert_eq!(fib.v4().get(p4("0.0.0.0/0")), Some(u32::MAX));
    assert_eq!(fib.v4().get(p4("192.0.2.1/32")), Some(6));
    assert_eq!(fib.v6().get(p6("2001:db8::/32")), Some(3));
    assert_eq!(fib.v6().get(p6("::/0")), Some(0));
    assert_eq!(fib.v6().get(p6("2001:db8:ffff:ffff::/64")), Some(5));
}

#[test]
fn mixed_families_comments_and_blank_lines() {
    let fib = read_fib_from(MIXED.as_bytes(), Path::new("mixed")).unwrap();
    check_mixed(&fib);
}

#[test]
fn compression_is_detected_by_content_not_name() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        write(dir.path(), "plain.txt", MIXED.as_bytes()),
        write(dir.path(), "gzip-named.txt", &gzip(MIXED.as_bytes())),
        write(dir.path(), "plain-named.gz", MIXED.as_bytes()),
        write(dir.path(), "bzip2.table", &bzip(MIXED.as_bytes())),
    ];
    for f in &files {
        let fib = read_fib(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        check_mixed(&fib);
    }
}

#[test]
fn a_later_line_replaces_an_earlier_one_even_unsorted() {
    let text =
        "10.0.0.0/8 1\n2001:db8::/32 7\n9.0.0.0/8 5\n10.0.0.0/8 2\n2001:db8::/32 8\n10.0.0.0/8 3\n";
    let fib = read_fib_from(text.as_bytes(), Path::new("dups")).unwrap();
    assert_eq!(fib.v4().len(), 2);
    assert_eq!(fib.v4().get(p4("10.0.0.0/8")), Some(3));
    assert_eq!(fib.v4().get(p4("9.0.0.0/8")), Some(5));
    assert_eq!(fib.v6().len(), 1);
    assert_eq!(fib.v6().get(p6("2001:db8::/32")), Some(8));
    let order: Vec<String> = fib.v4().iter().map(|(p, _)| p.to_string()).collect();
    assert_eq!(order, ["9.0.0.0/8", "10.0.0.0/8"]);
}

#[test]
fn empty_and_comment_only_files_give_an_empty_fib() {
    for text in ["", "\n\n", "# nothing\n   # here\n"] {
        let fib = read_fib_from(text.as_bytes(), Path::new("empty")).unwrap();
        assert!(fib.is_empty(), "{text:?}");
    }
}

#[test]
fn every_error_kind_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    // (bad line, what the message must say); each is put at a different line number behind
    // good lines, and the file also gets good lines after it.
    let cases: &[(&[u8], &str)] = &[
        (b"10.0.0.256/8 1", "bad IPv4 address"),
        (b"2001:db8::g/32 1", "bad IPv6 address"),
        (b"10.0.0.0 1", "not a prefix"),
        (
            b"10.0.0.1/8 1",
            "host bits set in 10.0.0.1/8 (the network is 10.0.0.0/8)",
        ),
        (b"2001:db8::1/64 1", "host bits set"),
        (b"10.0.0.0/33 1", "prefix length 33 is longer than 32 bits"),
        (
            b"2001:db8::/129 1",
            "prefix length 129 is longer than 128 bits",
        ),
        (b"10.0.0.0/abc 1", "bad prefix length"),
        (b"10.0.0.0/8", "missing next hop"),
        (b"10.0.0.0/8 1 2", "unexpected extra field \"2\""),
        (b"10.0.0.0/8 eth0", "next hop \"eth0\""),
        (b"10.0.0.0/8 4294967296", "next hop \"4294967296\""),
        (b"10.0.0.0/8 -3", "next hop \"-3\""),
        (b"10.0.0.0/8 1 # caf\xe9", "invalid UTF-8"),
        (b"\xff\xfe10.0.0.0/8 1", "invalid UTF-8"),
    ];
    for (i, (bad, want)) in cases.iter().enumerate() {
        let good_before = i + 1;
        let mut text = Vec::new();
        for k in 0..good_before {
            writeln!(text, "10.{k}.0.0/16 {k}").unwrap();
        }
        text.extend_from_slice(bad);
        text.extend_from_slice(b"\n192.0.2.0/24 9\n");
        let bad_line = good_before as u64 + 1;
        for (name, bytes) in [("t.txt", text.clone()), ("t.txt.gz", gzip(&text))] {
            let path = write(dir.path(), name, &bytes);
            let err = read_fib(&path).expect_err(&String::from_utf8_lossy(bad));
            match &err {
                LoadError::Line {
                    path: p,
                    line,
                    reason,
                } => {
                    assert_eq!(p, &path);
                    assert_eq!(*line, bad_line, "{err}");
                    assert!(reason.contains(want), "{err}");
                }
                other => panic!("wrong error kind: {other}"),
            }
            let shown = err.to_string();
            let prefix = format!("{}:{bad_line}: ", path.display());
            assert!(shown.starts_with(&prefix), "{shown}");
        }
    }
}

#[test]
fn missing_and_corrupt_files_are_io_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-table.txt");
    let err = read_fib(&missing).unwrap_err();
    assert!(matches!(err, LoadError::Io { .. }), "{err}");
    assert!(err.to_string().contains("no-such-table.txt"), "{err}");

    let mut gz = gzip(&b"192.0.2.0/24 1\n".repeat(5000));
    gz.truncate(gz.len() - 30);
    let path = write(dir.path(), "truncated.gz", &gz);
    let err = read_fib(&path).unwrap_err();
    assert!(matches!(err, LoadError::Io { .. }), "{err}");
    assert!(
        err.to_string().starts_with(&path.display().to_string()),
        "{err}"
    );
}

#[test]
fn writer_output_reads_back_identically() {
    let original = read_fib_from(MIXED.as_bytes(), Path::new("mixed")).unwrap();
    let mut text = Vec::new();
    write_fib(&mut text, &original).unwrap();
    let again = read_fib_from(&text[..], Path::new("written")).unwrap();
    assert_eq!(again, original);
}

// ---------------------------------------------------------------------------------------------
// Real tables.

/// Route lines of a file counted independently of the reader: neither blank nor a comment.
fn count_route_lines(path: &Path) -> usize {
    let file = fs::File::open(path).unwrap();
    BufReader::new(flate2::read::MultiGzDecoder::new(file))
        .lines()
        .map(|l| l.unwrap())
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .count()
}

/// (file, routes, shortest length, longest length, most common length), from the README of
/// `shared/data` (section 1).
const IPV4_TABLES: &[(&str, usize, u8, u8, u8)] = &[
    ("ipv4-bgpdump-et-20151023.txt.gz", 577_703, 0, 32, 24),
    ("ipv4-bart-tier1-2023.txt.gz", 901_899, 8, 32, 24),
    (
        "ipv4-routeviews-20151101-originas.txt.gz",
        606_138,
        8,
        32,
        24,
    ),
    ("ipv4-rrc06-20100701-bestpath.txt.gz", 323_487, 8, 32, 24),
    ("ipv4-rrc00-20020722-bestpath.txt.gz", 112_988, 8, 32, 24),
];

const IPV6_TABLES: &[(&str, usize, u8, u8, u8)] = &[
    ("ipv6-ris-dfz10-20241220.txt.gz", 228_726, 16, 128, 48),
    ("ipv6-ris-all-20241220.txt.gz", 256_399, 0, 128, 48),
    ("ipv6-bart-tier1-2023.txt.gz", 160_147, 16, 128, 48),
    (
        "ipv6-routeviews6-20150922-bestpath.txt.gz",
        25_878,
        0,
        128,
        48,
    ),
    (
        "ipv6-routeviews-20151101-originas.txt.gz",
        27_693,
        16,
        128,
        48,
    ),
    ("ipv6-linx-20141225.txt.gz", 20_440, 16, 48, 48),
];

/// The nine RouteViews per-peer IPv6 tables of 2021-01-17: (peer AS, routes).
const IPV6_ROUTEVIEWS_PEERS: &[(u32, usize)] = &[
    (293, 105_363),
    (852, 102_126),
    (19016, 79_431),
    (19151, 103_067),
    (19653, 105_957),
    (23367, 102_739),
    (53828, 104_235),
    (199524, 100_899),
    (395570, 102_731),
];

/// (shortest, longest, most common) prefix length.
type Lengths = (u8, u8, u8);

fn length_summary(histogram: &[usize]) -> Lengths {
    let lengths: Vec<u8> = (0..histogram.len())
        .filter(|&l| histogram[l] > 0)
        .map(|l| l as u8)
        .collect();
    let most = (0..histogram.len()).max_by_key(|&l| histogram[l]).unwrap() as u8;
    (lengths[0], *lengths.last().unwrap(), most)
}

#[test]
fn real_ipv4_tables_load_with_the_documented_counts() {
    let Some(data) = ipfib_testdata::shared_data() else {
        return;
    };
    for &(name, routes, min, max, most) in IPV4_TABLES {
        let path = data.join("ipv4").join(name);
        let fib = read_fib(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(fib.v4().len(), routes, "{name}");
        assert_eq!(fib.v6().len(), 0, "{name}");
        assert_eq!(count_route_lines(&path), routes, "{name}: duplicates?");
        assert_eq!(
            length_summary(&fib.v4().length_histogram()),
            (min, max, most),
            "{name}"
        );
        assert!(
            fib.v4().iter().all(|(_, nh)| nh >= 1),
            "{name}: next hop ids start at 1"
        );
    }
}

#[test]
fn real_ipv6_tables_load_with_the_documented_counts() {
    let Some(data) = ipfib_testdata::shared_data() else {
        return;
    };
    let mut tables: Vec<(String, usize, Option<Lengths>)> = IPV6_TABLES
        .iter()
        .map(|&(n, r, a, b, c)| (n.to_string(), r, Some((a, b, c))))
        .collect();
    for &(asn, routes) in IPV6_ROUTEVIEWS_PEERS {
        let name = format!("ipv6-routeviews-as{asn}-20210117.txt.gz");
        tables.push((name, routes, None));
    }
    for (name, routes, lengths) in tables {
        let path = data.join("ipv6").join(&name);
        let fib = read_fib(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(fib.v6().len(), routes, "{name}");
        assert_eq!(fib.v4().len(), 0, "{name}");
        if let Some(lengths) = lengths {
            assert_eq!(
                length_summary(&fib.v6().length_histogram()),
                lengths,
                "{name}"
            );
            assert_eq!(count_route_lines(&path), routes, "{name}: duplicates?");
        }
        assert!(
            fib.v6().iter().all(|(_, nh)| nh >= 1),
            "{name}: next hop ids start at 1"
        );
    }
}
