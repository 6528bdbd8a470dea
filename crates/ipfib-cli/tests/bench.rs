//! `ipfib bench` end to end: arguments, the terminal table, the JSON, the plots, trace files.
//!
//! Every run here is tiny (a few hundred prefixes, a few thousand lookups, one run) so the
//! suite stays fast; the numbers are not looked at, only the shape and the answers.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn ipfib(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ipfib"))
        .arg("bench")
        .args(args)
        .output()
        .expect("run ipfib")
}

fn ok(args: &[&str]) -> (String, String) {
    let out = ipfib(args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "ipfib bench {args:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    (stdout, stderr)
}

fn fails(args: &[&str]) -> String {
    let out = ipfib(args);
    assert!(!out.status.success(), "ipfib bench {args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const TINY: &[&str] = &[
    "--gen-prefixes",
    "400",
    "--count",
    "3000",
    "--runs",
    "1",
    "--rounds",
    "2",
];

fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = TINY.to_vec();
    v.extend_from_slice(extra);
    v
}

/// The rows of a JSON file, without the kernel's BPF trie's (feature `bpf`): it joins only
/// where the kernel allows BPF, so these tests count the others; its own rows are checked by
/// `the_kernel_trie_is_timed_through_its_program` (and its answers by every run's agreement
/// check).
fn read_json(path: &Path) -> Vec<Value> {
    read_all_json(path)
        .into_iter()
        .filter(|r| r["engine"] != "bpf-lpm-trie")
        .collect()
}

/// Checks the row count, naming the run's "left out" notes when a comparator did not join
/// (a DPDK EAL or a kernel that refused, say), so a missing row says why.
fn assert_rows(rows: &[Value], expected: usize, stderr: &str) {
    let notes: Vec<&str> = stderr.lines().filter(|l| l.contains("left out")).collect();
    assert_eq!(
        rows.len(),
        expected,
        "rows missing; the run said: {notes:#?}"
    );
}

fn read_all_json(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    match serde_json::from_str(&text).unwrap() {
        Value::Array(rows) => rows,
        other => panic!("expected a JSON array, got {other}"),
    }
}

/// The engines a default build compares: ours, plus the peer crates with feature `peers` (and
/// DPDK's with feature `dpdk`, which these tests leave to the DPDK crate's own tests).
fn engines(family: u8) -> Vec<&'static str> {
    // The registry's engines that hold the family (a new engine joins every bench without
    // editing this list; DXR and its presets are IPv4 only).
    let options = ipfib::BuildOptions::default();
    let holds = |e: &ipfib::engine::EngineInfo| match family {
        4 => e.supports::<u32>(&options).unwrap(),
        _ => e.supports::<u128>(&options).unwrap(),
    };
    let mut e: Vec<&'static str> = ipfib::engine::engines()
        .iter()
        .filter(|e| holds(e))
        .map(|e| e.name())
        .collect();
    if cfg!(feature = "peers") {
        e.extend(["prefix-trie", "ip_network_table"]);
    }
    if cfg!(feature = "dpdk") {
        e.extend(if family == 4 {
            ["dpdk-fib", "dpdk-lpm"]
        } else {
            ["dpdk-fib6", "dpdk-lpm6"]
        });
    }
    e
}

#[test]
fn default_job_on_a_tiny_table_prints_every_engine_and_path() {
    let (stdout, stderr) = ok(TINY);
    for e in engines(6) {
        for path in ["single", "batch"] {
            assert!(
                stdout
                    .lines()
                    .any(|l| l.starts_with(e) && l.contains(path) && l.contains("throughput")),
                "no {e} {path} line in\n{stdout}"
            );
        }
    }
    let mut lines = stdout.lines();
    let first = lines.next().unwrap();
    assert!(
        first.starts_with("IPv6 table generated (400 prefixes)"),
        "{first}"
    );
    assert!(lines.next().unwrap().starts_with("engine"), "{stdout}");
    assert!(stderr.contains("CPUs allowed"), "{stderr}");
}

/// PlanB's lines per lookup follow the path: a staged IPv6 batch (the AVX-512 and AVX2
/// backends take the staged walk) answers most of the space trace from the staged entry,
/// single lookups walk every level.
#[test]
fn planb_lines_per_lookup_follow_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    ok(&[
        "--family",
        "6",
        "--gen-prefixes",
        "60000",
        "--trace",
        "space",
        "--count",
        "8192",
        "--runs",
        "1",
        "--rounds",
        "1",
        "--engines",
        "planb",
        "--json",
        json.to_str().unwrap(),
    ]);
    let rows = read_json(&json);
    let lines = |path: &str| {
        let row = rows.iter().find(|r| r["path"] == path).unwrap();
        row["lines_per_lookup"].as_f64().unwrap()
    };
    let (single, batch) = (lines("single"), lines("batch"));
    assert!(single >= 4.0, "a deep table's walk: {single}");
    if matches!(
        ipfib::Backend::detect(),
        ipfib::Backend::Avx512 | ipfib::Backend::Avx2
    ) {
        assert!(batch < 1.5, "staged: {batch} against {single}");
    } else {
        assert_eq!(batch, single, "no staged walk with the portable backends");
    }
}

#[test]
fn json_has_every_field_and_one_checksum_per_mode() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let (_, stderr) = ok(&with(&[
        "--mode",
        "throughput,latency,repeated",
        "--threads",
        "1,2",
        "--json",
        json.to_str().unwrap(),
    ]));
    let rows = read_json(&json);
    // Engines x (2 throughput + 1 latency + 2 repeated paths) x 2 thread counts.
    assert_rows(&rows, engines(6).len() * 5 * 2, &stderr);
    for r in &rows {
        for field in [
            "engine",
            "path",
            "mode",
            "threads",
            "mlps",
            "mlps_min",
            "mlps_max",
            "ns_per_lookup",
            "build_ms",
            "bytes",
            "bytes_per_prefix",
            "checksum",
            "table",
            "family",
            "prefixes",
            "trace",
            "trace_len",
            "seed",
            "rounds",
            "round_mlps",
            "call",
            "native",
            "lines_per_lookup",
        ] {
            assert!(r.get(field).is_some(), "{field} missing in {r}");
        }
        // PlanB, Poptrie, CP-Trie and DXR model the lines they read (the direct entry plus at least one
        // more line: a node, a range chunk or the next hop), so at least 2; Patricia one per
        // node visited; the reference and the peers have no model and say null.
        let lines = &r["lines_per_lookup"];
        match r["engine"].as_str().unwrap() {
            // A staged PlanB batch answers some lookups from one line (the next test).
            "planb" if r["path"] == "batch" => assert!(lines.as_f64().unwrap() >= 1.0, "{r}"),
            "planb" | "poptrie" | "cptrie" | "dxr" | "d16r" | "d20r" => {
                assert!(lines.as_f64().unwrap() >= 2.0, "{r}")
            }
            "patricia" => assert!(lines.as_f64().unwrap() >= 1.0, "{r}"),
            "reference" | "prefix-trie" | "ip_network_table" => assert!(lines.is_null(), "{r}"),
            _ => assert!(lines.is_null() || lines.as_f64().unwrap() >= 1.0, "{r}"),
        }
        // Two rounds: the row's figure is the median of the two, its range their spread.
        let rounds: Vec<f64> = r["round_mlps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_f64().unwrap())
            .collect();
        assert_eq!((r["rounds"].as_u64(), rounds.len()), (Some(2), 2), "{r}");
        let spread = (rounds[0].min(rounds[1]), rounds[0].max(rounds[1]));
        assert_eq!(
            (
                r["mlps_min"].as_f64().unwrap(),
                r["mlps_max"].as_f64().unwrap()
            ),
            spread
        );
        // What the timed loop called, and for DPDK which lookup function DPDK selected.
        let engine = r["engine"].as_str().unwrap();
        let call = r["call"].as_str().unwrap();
        let native = &r["native"];
        match (r["path"].as_str().unwrap(), engine) {
            ("single", _) => assert_eq!(call, "lookup", "{r}"),
            // Every registered engine of ours.
            _ if r["ours"] == true => assert_eq!(call, "lookup_batch_raw", "{r}"),
            (_, e) if e.starts_with("dpdk-") => assert_eq!(call, native["call"], "{r}"),
            _ => assert_eq!(call, "lookup_batch", "{r}"),
        }
        if engine.starts_with("dpdk-") {
            assert!(native["selected"].is_string(), "{r}");
            // DPDK's entry sizes: rte_fib's 1, 2, 4 or 8 bytes and rte_fib6's 2, 4 or 8 (the
            // narrowest that holds the table's next hops), rte_lpm's and rte_lpm6's 4.
            assert!(
                [1, 2, 4, 8].contains(&native["next_hop_bytes"].as_u64().unwrap()),
                "{r}"
            );
            assert!(native["answer_bytes"].as_u64().unwrap() >= 4, "{r}");
        } else {
            assert!(native.is_null(), "{r}");
        }
        let (mlps, lo, hi) = (
            r["mlps"].as_f64().unwrap(),
            r["mlps_min"].as_f64().unwrap(),
            r["mlps_max"].as_f64().unwrap(),
        );
        assert!(lo > 0.0 && lo <= mlps && mlps <= hi, "{r}");
        assert_eq!(r["family"], "IPv6");
        assert_eq!(r["prefixes"], 400);
        assert_eq!(r["trace_len"], 3000);
        let threads = r["threads"].as_u64().unwrap();
        assert_eq!(
            r["per_thread_mlps"].as_array().unwrap().len() as u64,
            threads
        );
        let bytes = r["bytes"].as_f64().unwrap();
        assert!((r["bytes_per_prefix"].as_f64().unwrap() - bytes / 400.0).abs() < 1e-6);
        if r["mode"] == "latency" {
            assert_eq!(r["path"], "single", "latency has no batch path");
        }
    }
    // Engines agree: one checksum per mode (over all engines, paths and thread counts).
    for mode in ["throughput", "latency", "repeated"] {
        let mut sums: Vec<&str> = rows
            .iter()
            .filter(|r| r["mode"] == mode)
            .map(|r| r["checksum"].as_str().unwrap())
            .collect();
        sums.dedup();
        assert_eq!(sums.len(), 1, "{mode}: {sums:?}");
        assert_eq!(sums[0].len(), 16);
    }
    for e in engines(6) {
        assert!(rows.iter().any(|r| r["engine"] == e), "{e} missing");
    }
}

/// FNV-1a over (index, answer) as little-endian u64 pairs, a miss as 2^32: the checksum as the
/// help and the JSON define it, written out independently of the bench's code.
fn fnv(answers: &[Option<u32>]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, a) in answers.iter().enumerate() {
        let code = a.map_or(1u64 << 32, u64::from);
        for b in (i as u64)
            .to_le_bytes()
            .into_iter()
            .chain(code.to_le_bytes())
        {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

#[test]
fn fib_and_trace_files_give_the_checksum_of_the_right_answers() {
    let dir = tempfile::tempdir().unwrap();
    let fib = dir.path().join("fib.txt");
    std::fs::write(
        &fib,
        "10.0.0.0/8 1\n10.1.0.0/16 2\n10.1.2.0/24 3\n192.168.0.0/16 4\n2001:db8::/32 9\n",
    )
    .unwrap();
    let trace = dir.path().join("trace.txt");
    std::fs::write(
        &trace,
        "# hand-made\n10.1.2.3\n10.1.3.0\n10.200.0.1\n11.0.0.0\n192.168.255.255\n0.0.0.0\n",
    )
    .unwrap();
    let json = dir.path().join("out.json");
    let (_, stderr) = ok(&[
        "--fib",
        fib.to_str().unwrap(),
        "--family",
        "4",
        "--trace",
        trace.to_str().unwrap(),
        "--runs",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    let expected = fnv(&[Some(3), Some(2), Some(1), None, Some(4), None]);
    let rows = read_json(&json);
    assert_rows(&rows, engines(4).len() * 2, &stderr);
    for r in &rows {
        assert_eq!(r["checksum"], expected.as_str(), "{r}");
        assert_eq!(r["family"], "IPv4");
        assert_eq!(r["prefixes"], 4);
        assert_eq!(r["trace_len"], 6);
        assert_eq!(r["table"], fib.to_str().unwrap());
    }
}

#[test]
fn a_trace_of_the_wrong_family_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    std::fs::write(&trace, "2001:db8::1\n10.0.0.1\n").unwrap();
    let err = fails(&with(&["--trace", trace.to_str().unwrap()]));
    assert!(err.contains("t.txt:2"), "{err}");
    assert!(err.contains("not an IPv6 address"), "{err}");
}

#[test]
fn plots_are_written_as_svg_and_png_with_scaling_plots() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("p.svg");
    ok(&[
        "--sizes",
        "200,400",
        "--threads",
        "1,2",
        "--count",
        "2000",
        "--runs",
        "1",
        "--engines",
        "planb,reference",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    for name in ["p.svg", "p-sizes.svg", "p-threads.svg"] {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert!(
            text.starts_with("<svg"),
            "{name}: {}",
            &text[..text.len().min(80)]
        );
        assert!(text.trim_end().ends_with("</svg>"), "{name}");
        assert!(
            text.contains("planb") && text.contains("reference"),
            "{name}"
        );
    }
    let png = dir.path().join("p.png");
    ok(&with(&["--plot", png.to_str().unwrap()]));
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 1000);
    assert!(
        !dir.path().join("p-sizes.png").exists(),
        "one size: no scaling plot"
    );
}

#[test]
fn engines_can_be_selected_and_unknown_ones_are_refused() {
    let (stdout, _) = ok(&with(&["--engines", "REFERENCE", "--family", "4"]));
    let mut engines: Vec<&str> = stdout
        .lines()
        .skip(2)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    engines.sort_unstable();
    engines.dedup();
    assert_eq!(engines, ["reference"], "{stdout}");
    assert!(stdout.starts_with("IPv4 table"), "{stdout}");
    let err = fails(&with(&["--engines", "planb,nosuch"]));
    assert!(err.contains("nosuch") && err.contains("known:"), "{err}");
}

#[test]
fn bad_arguments_are_errors() {
    let cases: &[(&[&str], &str)] = &[
        (&["--runs", "0"], "--runs"),
        (&["--rounds", "0"], "--rounds"),
        (&["--count", "0"], "--count"),
        (&["--chunk", "0"], "--chunk"),
        (&["--threads", "1,0"], "--threads"),
        (&["--family", "5"], "address family"),
        (&["--mode", "fastest"], "fastest"),
        (&["--plot", "out.pdf"], ".svg or .png"),
        (
            &["--trace", "/nonexistent/trace.txt"],
            "/nonexistent/trace.txt",
        ),
    ];
    for (args, needle) in cases {
        let err = fails(&with(args));
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // A table file excludes generated sizes; a missing one is named.
    let err = fails(&["--fib", "x.txt", "--sizes", "10,20"]);
    assert!(err.contains("cannot be used"), "{err}");
    let err = fails(&["--fib", "/nonexistent/fib.txt", "--count", "10"]);
    assert!(err.contains("/nonexistent/fib.txt"), "{err}");
}

#[test]
fn the_real_dfz_table_benches_with_all_engines_agreeing() {
    let Some(data) = ipfib_testdata::shared_data() else {
        return;
    };
    let fib = data.join("ipv6/ipv6-ris-dfz10-20241220.txt.gz");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("dfz.json");
    let (_, stderr) = ok(&[
        "--fib",
        fib.to_str().unwrap(),
        "--trace",
        "matched",
        "--count",
        "20000",
        "--runs",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    let rows = read_json(&json);
    assert_rows(&rows, engines(6).len() * 2, &stderr);
    let ([_, routes], _) = common::count_text_table(&fib);
    assert!(routes > 0);
    assert!(rows.iter().all(|r| r["prefixes"] == routes as u64));
    let first = rows[0]["checksum"].clone();
    assert!(rows.iter().all(|r| r["checksum"] == first));
}

#[test]
fn an_mrt_rib_is_a_table_too_with_its_options() {
    let Some(data) = ipfib_testdata::shared_data() else {
        return;
    };
    let rib = data.join("mrt/rib/routeviews6.rib.20151101.0600.first6870prefixes.gz");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("mrt.json");
    let run = |value: &str| {
        ok(&[
            "--fib",
            rib.to_str().unwrap(),
            "--value",
            value,
            "--engines",
            "planb,reference",
            "--count",
            "5000",
            "--runs",
            "1",
            "--json",
            json.to_str().unwrap(),
        ]);
        read_json(&json)
    };
    let by_hop = run("next-hop");
    let by_as = run("origin-as");
    for r in by_hop.iter().chain(&by_as) {
        assert_eq!(r["table"], rib.to_str().unwrap());
        assert_eq!(r["family"], "IPv6");
        let n = r["prefixes"].as_u64().unwrap();
        assert!(n > 1000 && n != 250_000, "{n}");
    }
    // Same prefixes and trace, other values: the answers (and so the checksums) differ.
    assert_ne!(by_hop[0]["checksum"], by_as[0]["checksum"]);
    assert_eq!(by_hop[0]["checksum"], by_hop[1]["checksum"]);
}

/// After the table, one summary line per mode, path and threads that names the winner (one
/// of the engines), its ratio to the runner-up and the best peer, and the CPU model; the JSON
/// rows carry the same figures.
#[test]
fn a_summary_line_names_the_winner_and_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let (stdout, _) = ok(&with(&["--json", json.to_str().unwrap()]));
    let summaries: Vec<&str> = stdout.lines().filter(|l| l.contains(" wins ")).collect();
    assert_eq!(summaries.len(), 2, "single and batch:\n{stdout}");
    let names = engines(6);
    for (line, path) in summaries.iter().zip(["single", "batch"]) {
        let winner = line.split_whitespace().next().unwrap();
        assert!(names.contains(&winner), "{winner}: {line}");
        assert!(
            line.contains(&format!("wins throughput {path} x1 at ")),
            "{line}"
        );
        assert!(line.contains("the runner-up "), "{line}");
        if cfg!(feature = "peers") {
            assert!(line.contains("peer"), "{line}");
        }
        let cpu = line.split_once("; CPU: ").map(|(_, c)| c.trim());
        assert!(cpu.is_some_and(|c| !c.is_empty()), "no CPU: {line}");
    }
    // The summaries come after the table's rows.
    let lines: Vec<&str> = stdout.lines().collect();
    let last_row = lines
        .iter()
        .rposition(|l| l.contains("throughput") && !l.contains(" wins "));
    let first_summary = lines.iter().position(|l| l.contains(" wins "));
    assert!(last_row < first_summary, "{stdout}");
    let rows = read_json(&json);
    for r in &rows {
        let s = &r["summary"];
        assert_eq!((&s["mode"], &s["path"]), (&r["mode"], &r["path"]), "{r}");
        let winner = s["winner"].as_str().unwrap();
        let best = rows
            .iter()
            .filter(|o| o["path"] == r["path"])
            .map(|o| o["mlps"].as_f64().unwrap())
            .fold(0.0, f64::max);
        assert_eq!(s["winner_mlps"].as_f64().unwrap(), best, "{r}");
        assert!(rows
            .iter()
            .any(|o| o["engine"] == winner && o["mlps"] == best));
        assert!(s["vs_runner_up"].as_f64().unwrap() >= 1.0, "{s}");
        assert!(!s["cpu_model"].as_str().unwrap().is_empty(), "{s}");
        if cfg!(feature = "peers") {
            assert!(
                s["best_peer"].is_string() && s["vs_best_peer"].is_f64(),
                "{s}"
            );
        }
        assert!(stdout.contains(winner));
    }
}

/// With standard error a pipe (no terminal, no bar), each stage is a line, so a log shows life.
#[test]
fn progress_is_written_as_lines_when_stderr_is_a_pipe() {
    let (_, stderr) = ok(&with(&["--engines", "planb,reference"]));
    for stage in [
        "bench: building planb (1/",
        "bench: building reference (2/",
        "bench: checking that all engines agree (throughput)",
        "bench: timing planb single throughput x1, round 1/2",
        "bench: timing reference batch throughput x1, round 2/2",
    ] {
        assert!(stderr.contains(stage), "{stage} missing:\n{stderr}");
    }
    // 2 builds + 1 check + 2 engines x 2 paths x 2 rounds, counted out of their total.
    assert!(stderr.contains("(11/11)..."), "{stderr}");
    assert!(
        stderr.contains("bench: generating a 400-prefix IPv6 table"),
        "{stderr}"
    );
}

#[test]
fn the_kernel_trie_is_timed_through_its_program() {
    if !cfg!(feature = "bpf") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bpf.json");
    let (_, stderr) = ok(&with(&[
        "--family",
        "4",
        "--engines",
        "reference,bpf-lpm-trie",
        "--json",
        json.to_str().unwrap(),
    ]));
    let rows: Vec<Value> = read_all_json(&json)
        .into_iter()
        .filter(|r| r["engine"] == "bpf-lpm-trie")
        .collect();
    if rows.is_empty() {
        // The kernel refused BPF: the bench says why.
        assert!(stderr.contains("bpf-lpm-trie left out"), "{stderr}");
        return;
    }
    for r in &rows {
        let (call, native) = (r["call"].as_str().unwrap(), &r["native"]);
        match r["path"].as_str().unwrap() {
            "single" => assert_eq!(call, "lookup", "{r}"),
            _ => assert_eq!(
                (call, &native["selected"]),
                ("BPF_PROG_TEST_RUN", &Value::from("bpf_loop")),
                "{r}"
            ),
        }
        assert_eq!(r["ours"], false, "{r}");
    }
}
