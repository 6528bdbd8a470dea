//! `ipfib lookup` end to end: answers worked out by hand, stdin streaming over several chunks
//! checked against a naive longest-match model, error reporting and exit codes.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use common::{ipfib, shared_data, write_file, SMALL_FIB};
use ipnet::IpNet;

const ENGINES: [&str; 2] = ["planb", "reference"];

/// (address, answer) against `SMALL_FIB`, worked out by hand.
const HAND: &[(&str, &str)] = &[
    ("10.1.2.3", "0"),
    ("10.1.2.127", "0"),
    ("10.1.2.128", "3"),
    ("10.1.2.255", "3"),
    ("10.1.1.255", "2"),
    ("10.1.3.0", "2"),
    ("10.200.0.1", "1"),
    ("9.255.255.255", "-"),
    ("11.0.0.0", "-"),
    ("192.0.2.255", "4294967295"),
    ("192.0.3.0", "-"),
    ("255.255.255.255", "5"),
    ("255.255.255.254", "-"),
    ("0.0.0.0", "-"),
    ("2001:db8:1::5", "8"),
    ("2001:db8:2::", "7"),
    ("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "7"),
    ("2001:db9::", "-"),
    ("::1", "-"),
    ("::ffff:10.1.2.3", "-"),
    ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "9"),
    ("fffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "-"),
];

fn expected_hand() -> String {
    HAND.iter().map(|(_, nh)| format!("{nh}\n")).collect()
}

#[test]
fn answers_from_arguments_match_hand_worked_results() {
    let dir = tempfile::tempdir().unwrap();
    let fib = write_file(dir.path(), "small.txt", SMALL_FIB.as_bytes());
    for engine in ENGINES {
        let mut args = vec!["lookup", "--fib", &fib, "--engine", engine];
        args.extend(HAND.iter().map(|(a, _)| *a));
        let out = ipfib(&args, None);
        assert!(out.success, "{engine}: {}", out.stderr);
        assert_eq!(out.stdout, expected_hand(), "{engine}");
    }
}

#[test]
fn answers_from_stdin_with_whitespace_and_crlf() {
    let dir = tempfile::tempdir().unwrap();
    let fib = write_file(dir.path(), "small.txt", SMALL_FIB.as_bytes());
    let input: String = HAND
        .iter()
        .enumerate()
        .map(|(i, (a, _))| match i % 3 {
            0 => format!("{a}\n"),
            1 => format!("  {a}\t\r\n"),
            _ => format!("\t{a} \n"),
        })
        .collect();
    // The last line has no newline at all.
    let input = input.trim_end().to_string();
    for engine in ENGINES {
        let out = ipfib(
            &["lookup", "--fib", &fib, "--engine", engine],
            Some(input.as_bytes()),
        );
        assert!(out.success, "{engine}: {}", out.stderr);
        assert_eq!(out.stdout, expected_hand(), "{engine}");
    }
}

#[test]
fn a_family_without_routes_answers_dash() {
    let dir = tempfile::tempdir().unwrap();
    let v4_only = write_file(dir.path(), "v4.txt", b"0.0.0.0/0 3\n");
    let empty = write_file(dir.path(), "empty.txt", b"# no routes at all\n");
    let out = ipfib(
        &["lookup", "--fib", &v4_only, "1.2.3.4", "::", "2001:db8::1"],
        None,
    );
    assert!(out.success, "{}", out.stderr);
    assert_eq!(out.stdout, "3\n-\n-\n");
    // A table without routes is refused unless asked for (every answer would be "-").
    let out = ipfib(&["lookup", "--fib", &empty], Some(b"1.2.3.4\n::1\n"));
    assert!(!out.success);
    assert!(out.stderr.contains("--allow-empty"), "{}", out.stderr);
    assert_eq!(out.stdout, "");
    let out = ipfib(
        &["lookup", "--allow-empty", "--fib", &empty],
        Some(b"1.2.3.4\n::1\n"),
    );
    assert!(out.success, "{}", out.stderr);
    assert_eq!(out.stdout, "-\n-\n");
}

#[test]
fn empty_input_gives_empty_output() {
    let dir = tempfile::tempdir().unwrap();
    let fib = write_file(dir.path(), "small.txt", SMALL_FIB.as_bytes());
    let out = ipfib(&["lookup", "--fib", &fib], Some(b""));
    assert!(out.success, "{}", out.stderr);
    assert_eq!(out.stdout, "");
}

#[test]
fn a_bad_argument_is_named_and_nothing_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    let fib = write_file(dir.path(), "small.txt", SMALL_FIB.as_bytes());
    let out = ipfib(
        &["lookup", "--fib", &fib, "10.0.0.1", "::1", "10.0.0.0/8"],
        None,
    );
    assert!(!out.success);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("argument 3"), "{}", out.stderr);
    assert!(out.stderr.contains("10.0.0.0/8"), "{}", out.stderr);
}

#[test]
fn a_bad_stdin_line_is_named_after_answering_the_lines_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let fib = write_file(dir.path(), "small.txt", SMALL_FIB.as_bytes());
    let cases: &[(&[u8], &str, &str)] = &[
        (
            b"10.1.2.3\n10.0.0.1\nnonsense\n1.1.1.1\n",
            "stdin:3:",
            "0\n1\n",
        ),
        (b"10.1.2.3\n\n10.0.0.1\n", "stdin:2: empty line", "0\n"),
        (b"   \n", "stdin:1: empty line", ""),
        (b"::1\n10.0.0.1\xff\n", "stdin:2: invalid UTF-8", "-\n"),
        (b"10.0.0.1 10.0.0.2\n", "stdin:1:", ""),
    ];
    for &(input, err, printed) in cases {
        let out = ipfib(&["lookup", "--fib", &fib], Some(input));
        assert!(!out.success, "{input:?}");
        assert!(out.stderr.contains(err), "{input:?}: {}", out.stderr);
        assert_eq!(out.stdout, printed, "{input:?}");
    }
    // Far past the first chunk: the answers before the bad line are all there.
    let mut big = "10.1.2.3\n".repeat(70_000);
    big.push_str("10.1.2.3.4\n::1\n");
    let out = ipfib(&["lookup", "--fib", &fib], Some(big.as_bytes()));
    assert!(!out.success);
    assert!(out.stderr.contains("stdin:70001:"), "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 70_000);
}

#[test]
fn bad_table_unknown_engine_and_stdin_conflict_fail_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write_file(dir.path(), "bad.txt", b"10.0.0.0/8 1\n\n10.0.0.1/8 2\n");
    let out = ipfib(&["lookup", "--fib", &bad, "10.0.0.1"], None);
    assert!(!out.success);
    assert!(
        out.stderr.contains("bad.txt:3: host bits set"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "");

    let good = write_file(dir.path(), "good.txt", SMALL_FIB.as_bytes());
    let out = ipfib(
        &["lookup", "--fib", &good, "--engine", "nope", "1.1.1.1"],
        None,
    );
    assert!(!out.success);
    assert!(out.stderr.contains("unknown engine"), "{}", out.stderr);

    let out = ipfib(&["lookup", "--fib", "-"], Some(b"10.0.0.0/8 1\n"));
    assert!(!out.success);
    assert!(out.stderr.contains("--fib -"), "{}", out.stderr);
}

#[test]
fn the_table_can_come_gzipped_from_stdin() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(SMALL_FIB.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let mut args = vec!["lookup", "--fib", "-"];
    args.extend(HAND.iter().map(|(a, _)| *a));
    let out = ipfib(&args, Some(&gz));
    assert!(out.success, "{}", out.stderr);
    assert_eq!(out.stdout, expected_hand());
}

/// A deterministic pseudo-random sequence (xorshift64*), so the test needs no seed handling.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Longest match by scanning every route: too slow for real use, obviously right.
fn naive(routes: &[(IpNet, u32)], addr: IpAddr) -> String {
    routes
        .iter()
        .filter(|(net, _)| net.contains(&addr))
        .max_by_key(|(net, _)| net.prefix_len())
        .map_or("-".to_string(), |(_, nh)| nh.to_string())
}

#[test]
fn streaming_many_chunks_matches_a_naive_model() {
    let routes: Vec<(IpNet, u32)> = SMALL_FIB
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (p, nh) = l.split_once(' ').unwrap();
            (p.parse().unwrap(), nh.parse().unwrap())
        })
        .collect();
    // Addresses near the routes' edges, so every answer (and `-`) occurs often.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let n = 200_000; // a little over three chunks of 64 Ki
    let mut addrs = Vec::with_capacity(n);
    for _ in 0..n {
        let r = rng.next();
        let (net, _) = routes[(r % routes.len() as u64) as usize];
        let jitter = (r >> 32) % 512;
        let addr = match net {
            IpNet::V4(n) => {
                let base = u32::from(if r & (1 << 20) == 0 {
                    n.network()
                } else {
                    n.broadcast()
                });
                IpAddr::from(Ipv4Addr::from(
                    base.wrapping_add(jitter as u32).wrapping_sub(256),
                ))
            }
            IpNet::V6(n) => {
                let base = u128::from(if r & (1 << 20) == 0 {
                    n.network()
                } else {
                    n.broadcast()
                });
                IpAddr::from(Ipv6Addr::from(
                    base.wrapping_add(u128::from(jitter)).wrapping_sub(256),
                ))
            }
        };
        addrs.push(addr);
    }
    let input: String = addrs.iter().map(|a| format!("{a}\n")).collect();
    let expected: String = addrs.iter().map(|&a| naive(&routes, a) + "\n").collect();
    let dir = tempfile::tempdir().unwrap();
    let fib = write_file(dir.path(), "small.txt", SMALL_FIB.as_bytes());
    for engine in ENGINES {
        let out = ipfib(
            &["lookup", "--fib", &fib, "--engine", engine],
            Some(input.as_bytes()),
        );
        assert!(out.success, "{engine}: {}", out.stderr);
        assert_eq!(out.stdout.len(), expected.len(), "{engine}");
        assert!(
            out.stdout == expected,
            "{engine}: output differs from the naive model"
        );
    }
}

#[test]
fn real_tables_engines_agree_and_route_starts_always_match() {
    let Some(data) = shared_data() else { return };
    for file in [
        "ipv4/ipv4-rrc00-20020722-bestpath.txt.gz",
        "ipv6/ipv6-linx-20141225.txt.gz",
    ] {
        let path = data.join(file);
        let reader = BufReader::new(flate2::read::MultiGzDecoder::new(
            std::fs::File::open(&path).unwrap(),
        ));
        // The first and last address of every 5th route, and the address after its end.
        let mut input = String::new();
        for (i, line) in reader.lines().enumerate() {
            let line = line.unwrap();
            if i % 5 != 0 || line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let net: IpNet = line.split_whitespace().next().unwrap().parse().unwrap();
            input.push_str(&format!("{}\n{}\n", net.network(), net.broadcast()));
        }
        let path = path.to_str().unwrap();
        let outs: Vec<String> = ENGINES
            .iter()
            .map(|engine| {
                let out = ipfib(
                    &["lookup", "--fib", path, "--engine", engine],
                    Some(input.as_bytes()),
                );
                assert!(out.success, "{file} {engine}: {}", out.stderr);
                out.stdout
            })
            .collect();
        assert_eq!(outs[0].lines().count(), input.lines().count(), "{file}");
        assert!(outs[0] == outs[1], "{file}: planb and reference disagree");
        assert!(
            outs[0].lines().all(|l| l != "-"),
            "{file}: an address inside a route found no route"
        );
    }
}

#[test]
fn a_reader_that_goes_away_is_not_an_error() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let fib = write_file(dir.path(), "small.txt", SMALL_FIB.as_bytes());
    // 4 MB of answers: far more than a pipe holds, so the writer is still writing when the
    // reader closes its end.
    let input = "10.1.2.3\n".repeat(2_000_000);
    let mut child = Command::new(env!("CARGO_BIN_EXE_ipfib"))
        .args(["lookup", "--fib", &fib])
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut first = [0u8; 2];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap(); // then dropped: closed
    assert_eq!(&first, b"0\n");
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
