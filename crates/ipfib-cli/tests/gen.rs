//! `ipfib gen fib` and `ipfib gen trace` end to end.

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
