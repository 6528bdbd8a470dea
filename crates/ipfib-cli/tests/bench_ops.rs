//! `ipfib bench-ops` end to end on small tables: every structure's rows, the JSON, and the
//! answers checked inside the command (a wrong answer fails it). With feature `bpf` the
//! kernel's trie is among them where the kernel allows BPF, and says why not elsewhere.

use std::process::Command;

use serde_json::Value;

fn run(args: &[&str]) -> (Vec<Value>, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("ops.json");
    let out = Command::new(env!("CARGO_BIN_EXE_ipfib"))
        .arg("bench-ops")
        .args(args)
        .args(["--rounds", "1", "--per-update", "4", "--json"])
        .arg(&json)
        .output()
        .expect("run ipfib");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}\n{stdout}\n{stderr}");
    let rows = match serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap() {
        Value::Array(rows) => rows,
        other => panic!("not an array: {other}"),
    };
    (rows, stdout)
}

fn ops_of(rows: &[Value], structure: &str) -> Vec<String> {
    rows.iter()
        .filter(|r| r["structure"] == structure && !r["op"].is_null())
        .map(|r| r["op"].as_str().unwrap().to_string())
        .collect()
}

fn every_structure_is_measured(rows: &[Value], prefixes: u64) {
    let all = ["insert", "lookup", "update", "delete", "free"];
    assert_eq!(ops_of(rows, "livefib-coalesced"), all);
    assert_eq!(ops_of(rows, "patricia"), all);
    assert_eq!(
        ops_of(rows, "livefib-per-update"),
        ["insert", "update", "delete"]
    );
    for r in rows {
        assert_eq!(r["prefixes"], prefixes, "{r}");
        if !r["op"].is_null() {
            assert!(r["ns_per_op"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
    if cfg!(feature = "bpf") {
        let bpf: Vec<&Value> = rows
            .iter()
            .filter(|r| r["structure"] == "bpf-lpm-trie")
            .collect();
        let measured = ops_of(rows, "bpf-lpm-trie");
        let skipped = bpf.iter().find_map(|r| r["skipped"].as_str());
        // Either every operation (free perhaps skipped with its reason), or a reason.
        assert!(
            measured.len() >= 4 || skipped.is_some(),
            "{measured:?} {skipped:?}"
        );
        if let Some(why) = skipped {
            eprintln!("bpf-lpm-trie: {why}");
        }
    }
}

#[test]
fn the_dense_case_runs_every_structure_and_checks_its_answers() {
    let (rows, stdout) = run(&["--dense", "3000", "--lookups", "20000"]);
    every_structure_is_measured(&rows, 3000);
    assert!(stdout.contains("dense /32 keys 0..3000"), "{stdout}");
    let lookups = rows
        .iter()
        .find(|r| r["structure"] == "patricia" && r["op"] == "lookup")
        .unwrap();
    assert_eq!(lookups["count"], 20000);
}

#[test]
fn an_ipv6_fib_file_runs_too() {
    let dir = tempfile::tempdir().unwrap();
    let fib = dir.path().join("v6.txt");
    let status = Command::new(env!("CARGO_BIN_EXE_ipfib"))
        .args(["gen", "fib", "--family", "6", "--prefixes", "2000", "--out"])
        .arg(&fib)
        .status()
        .unwrap();
    assert!(status.success());
    let (rows, _) = run(&["--fib", fib.to_str().unwrap(), "--lookups", "20000"]);
    let prefixes = rows[0]["prefixes"].as_u64().unwrap();
    assert!(prefixes > 1000, "{prefixes}");
    assert!(rows.iter().all(|r| r["family"] == "IPv6"));
    every_structure_is_measured(&rows, prefixes);
}

#[test]
fn nonsense_is_refused() {
    for bad in [
        &["--dense", "0"][..],
        &["--fib", "x", "--dense", "5"],
        &["--engine", "nope"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_ipfib"))
            .arg("bench-ops")
            .args(bad)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad:?}");
    }
}
