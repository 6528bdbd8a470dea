//! `ipfib stats` end to end: counts and histograms worked out by hand, JSON shape, empty
//! families, and a real table's documented route count.

mod common;

use std::io::Write;

use common::{count_text_table, ipfib, shared_data, write_file, SMALL_FIB};
use serde_json::Value;

/// `SMALL_FIB` per family: (routes, [(length, routes)], merged intervals), counted by hand.
/// IPv4 intervals start at 0, 10/8, 10.1/16, 10.1.2/24, 10.1.2.128, 10.1.3.0, 10.2.0.0,
/// 11.0.0.0, 192.0.2.0, 192.0.3.0, 255.255.255.255; IPv6 at ::, 2001:db8::, 2001:db8:1::,
/// 2001:db8:2::, 2001:db9::, ffff::.
const V4: (u64, &[(u64, u64)], u64) = (6, &[(8, 1), (16, 1), (24, 2), (25, 1), (32, 1)], 11);
const V6: (u64, &[(u64, u64)], u64) = (3, &[(16, 1), (32, 1), (48, 1)], 6);

fn stats_json(args: &[&str], stdin: Option<&[u8]>) -> Value {
    let out = ipfib(args, stdin);
    assert!(out.success, "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
}

fn check_family(f: &Value, family: &str, (routes, lengths, intervals): (u64, &[(u64, u64)], u64)) {
    assert_eq!(f["family"], family);
    assert_eq!(f["routes"], routes, "{f}");
    let histogram: Vec<(u64, u64)> = f["prefix_lengths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["length"].as_u64().unwrap(), e["routes"].as_u64().unwrap()))
        .collect();
    assert_eq!(histogram, lengths, "{family}");
    assert_eq!(f["intervals"], intervals, "{family}");
    let bytes = f["bytes"].as_u64().unwrap();
    assert!(bytes > 0, "{f}");
    let per_prefix = f["bytes_per_prefix"].as_f64().unwrap();
    assert!(
        (per_prefix - bytes as f64 / routes as f64).abs() < 1e-9,
        "{f}"
    );
    assert!(f["build_ms"].as_f64().unwrap() >= 0.0, "{f}");
}

#[test]
fn json_counts_match_the_hand_counted_table_for_both_engines() {
    let dir = tempfile::tempdir().unwrap();
    let fib = write_file(dir.path(), "small.txt", SMALL_FIB.as_bytes());
    for engine in ["planb", "reference"] {
        let v = stats_json(
            &["stats", "--fib", &fib, "--engine", engine, "--json"],
            None,
        );
        assert_eq!(v["engine"], engine);
        assert_eq!(v["routes"], 9);
        let families = v["families"].as_array().unwrap();
        assert_eq!(families.len(), 2);
        check_family(&families[0], "IPv4", V4);
        check_family(&families[1], "IPv6", V6);
        for f in families {
            if engine == "planb" {
                assert!(f["depth"].as_u64().unwrap() >= 1, "{f}");
                assert!(f["lines"].as_u64().unwrap() >= 1, "{f}");
                assert_eq!(f["segments"].as_u64(), Some(1), "a built table: {f}");
                assert!(!f["node_search"].as_str().unwrap().is_empty(), "{f}");
                let parts: u64 = [
                    "direct_bytes",
                    "line_bytes",
                    "fallback_bytes",
                    "staged_bytes",
                ]
                .iter()
                .map(|k| f[*k].as_u64().unwrap())
                .sum();
                assert_eq!(
                    parts,
                    f["bytes"].as_u64().unwrap(),
                    "bytes by part add up: {f}"
                );
                // Lines by step: the direct or the staged entry (one of the two for each
                // lookup), the sub-table entry, one entry per tree node (the reported depth
                // counts the direct table too), the fallback stage; they add up to the lines
                // per lookup.
                for kind in ["matched", "uniform"] {
                    let steps = f[format!("lines_by_step_{kind}")].as_array().unwrap();
                    let names: Vec<&str> =
                        steps.iter().map(|s| s["step"].as_str().unwrap()).collect();
                    let depth = f["depth"].as_u64().unwrap() as usize;
                    assert_eq!(names.len(), depth + 3, "{f}");
                    assert_eq!(names[..4], ["direct", "staged", "sub-table", "node 1"]);
                    assert_eq!(names[depth + 2], "fallback");
                    let first: f64 = steps[..2]
                        .iter()
                        .map(|s| s["lines"].as_f64().unwrap())
                        .sum();
                    assert!((first - 1.0).abs() < 1e-9, "one first line each: {first}");
                    let sum: f64 = steps.iter().map(|s| s["lines"].as_f64().unwrap()).sum();
                    let total = f[format!("lines_per_lookup_{kind}")].as_f64().unwrap();
                    assert!((sum - total).abs() < 1e-9, "{kind}: {sum} vs {total}");
                }
            } else {
                assert!(f["depth"].is_null(), "{f}");
                assert!(f["lines_per_lookup_matched"].is_null(), "no model: {f}");
                assert!(f["lines_by_step_matched"].is_null(), "no model: {f}");
            }
        }
        if engine == "planb" {
            // Distinct answers, "no route" included: IPv4 -, 1, 2, 0, 3, 4294967295, 5;
            // IPv6 -, 7, 8, 9.
            assert_eq!(families[0]["distinct_results"], 7);
            assert_eq!(families[1]["distinct_results"], 4);
            assert_eq!(families[0]["fallback_cells"], 0);
        }
        if engine == "reference" {
            // The reference engine probes one hash map per length that has routes.
            assert_eq!(families[0]["max_probes"], 5);
            assert_eq!(families[1]["max_probes"], 3);
        }
    }
}

#[test]
fn text_report_lists_each_nonempty_length() {
    let dir = tempfile::tempdir().unwrap();
    let fib = write_file(dir.path(), "small.txt", SMALL_FIB.as_bytes());
    let out = ipfib(&["stats", "--fib", &fib], None);
    assert!(out.success, "{}", out.stderr);
    let text = &out.stdout;
    assert!(text.contains("9 routes (6 IPv4, 3 IPv6)"), "{text}");
    // Histogram rows are "/LEN  ROUTES  SHARE%".
    let rows: Vec<(String, u64)> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let len = f.next()?.strip_prefix('/')?;
            if !len.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let len = len.to_string();
            Some((len, f.next()?.parse().ok()?))
        })
        .collect();
    let want: Vec<(String, u64)> =
        V4.1.iter()
            .chain(V6.1)
            .map(|&(l, n)| (l.to_string(), n))
            .collect();
    assert_eq!(rows, want, "{text}");
    // Shares: 1 of 6 IPv4 routes, 2 of 6, and 1 of 3 IPv6 routes.
    for share in ["16.67%", "33.33%"] {
        assert!(text.contains(share), "{share}: {text}");
    }
}

/// A family without routes keeps its place in the JSON, marked empty, without engine figures;
/// the text report has no section for it.
#[test]
fn an_empty_family_is_marked_in_json_and_left_out_of_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let fib = write_file(dir.path(), "v6.txt", b"2001:db8::/32 1\n");
    let v = stats_json(&["stats", "--fib", &fib, "--json"], None);
    let (v4, v6) = (&v["families"][0], &v["families"][1]);
    assert_eq!(
        (&v4["family"], &v6["family"]),
        (&"IPv4".into(), &"IPv6".into())
    );
    assert_eq!(v4["routes"], 0);
    assert_eq!(v4["empty"], true);
    assert_eq!(v4["prefix_lengths"].as_array().unwrap().len(), 0);
    assert_eq!(v4["intervals"], 1);
    for engine_key in [
        "bytes_per_prefix",
        "bytes",
        "build_ms",
        "depth",
        "node_search",
    ] {
        assert!(v4.get(engine_key).is_none(), "{engine_key} in {v4}");
    }
    assert_eq!(v6["empty"], false);
    assert_eq!(v6["routes"], 1);
    assert!(v6["bytes"].as_u64().unwrap() > 0, "{v6}");
    assert!(v6["node_search"].is_string(), "{v6}");

    let out = ipfib(&["stats", "--fib", &fib], None);
    assert!(out.success, "{}", out.stderr);
    let text = &out.stdout;
    assert!(text.contains("1 routes (0 IPv4, 1 IPv6)"), "{text}");
    assert!(
        !text.lines().any(|l| l == "IPv4"),
        "an IPv4 section: {text}"
    );
    assert_eq!(text.lines().filter(|l| l == &"IPv6").count(), 1, "{text}");
    assert_eq!(text.matches("node search").count(), 1, "{text}");
}

#[test]
fn text_labels_say_what_the_figures_are() {
    let dir = tempfile::tempdir().unwrap();
    let fib = write_file(dir.path(), "small.txt", SMALL_FIB.as_bytes());
    let out = ipfib(&["stats", "--fib", &fib], None);
    assert!(out.success, "{}", out.stderr);
    assert!(!out.stdout.contains("direct_bytes"), "{}", out.stdout);
    assert_eq!(
        out.stdout.matches("direct bytes ").count(),
        2,
        "{}",
        out.stdout
    );
}

#[test]
fn reads_a_gzipped_table_from_stdin_and_reports_bad_ones() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(SMALL_FIB.as_bytes()).unwrap();
    let v = stats_json(
        &["stats", "--fib", "-", "--json"],
        Some(&gz.finish().unwrap()),
    );
    assert_eq!(v["routes"], 9);

    let out = ipfib(
        &["stats", "--fib", "-"],
        Some(b"10.0.0.0/8 1\n10.0.0.0/8\n"),
    );
    assert!(!out.success);
    assert!(
        out.stderr.contains("stdin:2: missing next hop"),
        "{}",
        out.stderr
    );
}

#[test]
fn real_table_counts_match_an_independent_count() {
    let Some(data) = shared_data() else { return };
    let path = data.join("ipv4/ipv4-rrc00-20020722-bestpath.txt.gz");
    let ([routes, v6_routes], [by_len, _]) = count_text_table(&path);
    assert!(routes > 0 && v6_routes == 0);
    let v = stats_json(&["stats", "--fib", path.to_str().unwrap(), "--json"], None);
    let v4 = &v["families"][0];
    assert_eq!(v4["routes"], routes as u64);
    let lengths = v4["prefix_lengths"].as_array().unwrap();
    let sum: u64 = lengths.iter().map(|e| e["routes"].as_u64().unwrap()).sum();
    assert_eq!(sum, routes as u64);
    for e in lengths {
        let len = e["length"].as_u64().unwrap() as usize;
        assert_eq!(e["routes"].as_u64().unwrap(), by_len[len] as u64, "/{len}");
    }
    let intervals = v4["intervals"].as_u64().unwrap();
    // Each route adds at most two interval boundaries; merging equal neighbours only removes.
    assert!(
        intervals > 1 && intervals <= 2 * routes as u64 + 1,
        "{intervals}"
    );
}

#[test]
fn an_error_and_its_cause_print_once() {
    let dir = tempfile::tempdir().unwrap();
    // A saved table's magic bytes and nothing more: the loader's context names the file and
    // quotes the saved-table error, which is also its cause.
    let path = write_file(dir.path(), "cut.ipfib", b"\x89IPFIB\r\n");
    let out = ipfib(&["stats", "--fib", &path], None);
    assert!(!out.success);
    assert_eq!(out.stderr.matches("truncated").count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("cut.ipfib"), "{}", out.stderr);
}
