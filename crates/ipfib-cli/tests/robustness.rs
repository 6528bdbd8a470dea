//! Every subcommand against hostile surroundings: a full disk on stdout (`/dev/full`), a
//! reader that went away, a closed or broken stderr, and absurd numbers. None of them may
//! panic (status 101) or abort (134): a closed pipe ends quietly, a write error is status 1
//! with a message, an out-of-range number is a usage error (status 2) naming the option.

mod common;

use std::fs::OpenOptions;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_ipfib");

/// A tiny bench run: small table, short trace, one round of one run, two engines.
const TINY_BENCH: &[&str] = &[
    "bench",
    "--gen-prefixes",
    "300",
    "--count",
    "2000",
    "--runs",
    "1",
    "--rounds",
    "1",
    "--engines",
    "planb,reference",
];

fn command(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .stdin(Stdio::null());
    c
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs with standard output on `/dev/full`, where every write fails with ENOSPC.
fn to_dev_full(args: &[&str]) -> Option<Output> {
    let full = OpenOptions::new().write(true).open("/dev/full").ok()?;
    Some(
        command(args)
            .stdout(Stdio::from(full))
            .stderr(Stdio::piped())
            .output()
            .unwrap(),
    )
}

fn assert_no_crash(out: &Output, what: &str) {
    let err = stderr_of(out);
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "{what}: status {:?}\n{err}",
        out.status
    );
}

fn assert_write_error(out: &Output, what: &str) {
    assert_no_crash(out, what);
    let err = stderr_of(out);
    assert_eq!(out.status.code(), Some(1), "{what}: {err}");
    assert!(
        err.contains("standard output") && err.contains("No space left"),
        "{what}: {err}"
    );
}

#[test]
fn bench_on_a_full_disk_fails_with_a_message_and_still_writes_its_json() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let mut args = TINY_BENCH.to_vec();
    args.extend(["--json", json.to_str().unwrap()]);
    let Some(out) = to_dev_full(&args) else {
        return; // no /dev/full here
    };
    assert_write_error(&out, "bench > /dev/full");
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 4, "{rows}");
}

#[test]
fn lookup_stats_gen_and_help_on_a_full_disk_fail_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let fib = common::write_file(dir.path(), "fib.txt", common::SMALL_FIB.as_bytes());
    let cases: &[&[&str]] = &[
        &["lookup", "--fib", &fib, "10.1.2.3", "2001:db8::1"],
        &["stats", "--fib", &fib],
        &["stats", "--fib", &fib, "--json"],
        &["gen", "fib", "--family", "6", "--prefixes", "100"],
        &[
            "gen", "trace", "--fib", &fib, "--kind", "matched", "--count", "100",
        ],
        &["convert", &fib, "-"],
        &["--help"],
    ];
    for args in cases {
        let Some(out) = to_dev_full(args) else {
            return;
        };
        assert_write_error(&out, &args.join(" "));
    }
}

#[test]
fn a_reader_that_went_away_ends_every_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let fib = common::write_file(dir.path(), "fib.txt", common::SMALL_FIB.as_bytes());
    let cases: &[&[&str]] = &[
        TINY_BENCH,
        &["lookup", "--fib", &fib, "10.1.2.3"],
        &["stats", "--fib", &fib],
        &["gen", "fib", "--family", "4", "--prefixes", "2000"],
        &["convert", &fib, "-"],
        &["--help"],
    ];
    for args in cases {
        let mut child = command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the read end before anything is written: every write gets EPIPE.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_no_crash(&out, &args.join(" "));
        assert!(out.status.success(), "{args:?}: {}", stderr_of(&out));
    }
}

#[test]
fn bench_piped_into_head_does_not_panic() {
    let cmd = format!("'{BIN}' {} | head -c 10", TINY_BENCH.join(" "));
    let out = Command::new("sh")
        .args(["-c", &cmd])
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout.len(), 10);
    assert!(!stderr_of(&out).contains("panicked"), "{}", stderr_of(&out));
}

/// Runs `ipfib ARGS` through `sh` with file descriptor 2 closed (`exec 2>&-`) and returns the
/// exit status and stdout.
fn with_stderr_closed(args: &[&str]) -> (Option<i32>, String) {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let cmd = format!("exec 2>&- '{BIN}' {}", quoted.join(" "));
    let out = Command::new("sh")
        .args(["-c", &cmd])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_closed_stderr_never_panics() {
    let (code, stdout) = with_stderr_closed(TINY_BENCH);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("planb"), "{stdout}");
    // Failures, whose message has nowhere to go, still have their status.
    let (code, _) = with_stderr_closed(&["bench", "--fib", "/nonexistent/fib.txt"]);
    assert_eq!(code, Some(1));
    let (code, _) = with_stderr_closed(&["bench", "--runs", "0"]);
    assert_eq!(code, Some(2));
    let (code, _) = with_stderr_closed(&["lookup", "--fib", "/nonexistent", "10.0.0.1"]);
    assert_eq!(code, Some(1));
}

#[test]
fn a_broken_stderr_never_panics() {
    for (args, status) in [
        (TINY_BENCH, 0),
        (&["bench", "--fib", "/nonexistent/fib.txt"][..], 1),
        (&["bench", "--threads", "0"][..], 2),
    ] {
        let mut child = command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stderr.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(status), "{args:?}");
    }
}

/// An argument out of range: a usage error (status 2) that names the option, never a panic,
/// an abort or an attempt to allocate.
fn assert_usage_error(args: &[&str], option: &str) {
    let out = command(args).output().unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(option), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

#[test]
fn absurd_numbers_are_usage_errors() {
    let huge = "18446744073709551615";
    let over = "18446744073709551616";
    let bench: &[(&str, &[&str])] = &[
        ("--count", &["0", "268435457", huge, over, "-1"]),
        ("--gen-prefixes", &["0", "67108865", huge]),
        ("--sizes", &["0", "10,67108865", huge]),
        ("--chunk", &["0", "16777217", huge]),
        ("--threads", &["0", "1,1025", huge]),
        ("--runs", &["0", "1001", huge]),
        ("--rounds", &["0", "101", huge]),
        ("--run-budget-ms", &["0", "3600001", huge]),
    ];
    for (option, values) in bench {
        for value in *values {
            // `--count=-1`: with a space, clap would take `-1` for an unknown flag.
            assert_usage_error(&["bench", &format!("{option}={value}")], option);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let fib = common::write_file(dir.path(), "fib.txt", common::SMALL_FIB.as_bytes());
    for value in ["0", "67108865", huge] {
        assert_usage_error(
            &["gen", "fib", "--family", "6", "--prefixes", value],
            "--prefixes",
        );
    }
    for value in ["0", "268435457", huge] {
        assert_usage_error(
            &[
                "gen", "trace", "--fib", &fib, "--kind", "uniform", "--count", value,
            ],
            "--count",
        );
    }
}

#[test]
fn a_run_larger_than_memory_is_refused_before_it_starts() {
    if !std::path::Path::new("/proc/meminfo").exists() {
        return; // the available memory is unknown here, so the run would start
    }
    // Within every range, but together about 275 GiB.
    let out = command(&[
        "bench",
        "--sizes",
        "67108864",
        "--count",
        "268435456",
        "--threads",
        "1024",
        "--chunk",
        "16777216",
    ])
    .output()
    .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("would need about") && err.contains("GiB"),
        "{err}"
    );
}
