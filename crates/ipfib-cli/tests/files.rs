//! Tables read from things that are not regular files, files changed under a running reader,
//! and outputs written through symlinks or interrupted: the file-handling guarantees of the
//! README's hardening section, each checked end to end through the binary.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{ipfib, write_file, SMALL_FIB};

/// Addresses of `SMALL_FIB` and what `lookup` answers for them.
const PROBES: [(&str, &str); 6] = [
    ("10.1.2.3", "0"),
    ("10.1.2.200", "3"),
    ("10.200.0.1", "1"),
    ("2001:db8:1::1", "8"),
    ("ffff::1", "9"),
    ("11.0.0.1", "-"),
];

fn expected() -> String {
    PROBES.iter().map(|(_, a)| format!("{a}\n")).collect()
}

fn lookup_args(fib: &str) -> Vec<&str> {
    let mut args = vec!["lookup", "--fib", fib];
    args.extend(PROBES.iter().map(|(q, _)| *q));
    args
}

/// The small table saved by `ipfib save` in `dir`, as bytes.
fn saved_table(dir: &Path) -> Vec<u8> {
    let text = write_file(dir, "small.txt", SMALL_FIB.as_bytes());
    let saved = dir.join("small.ipfib");
    let out = ipfib(&["save", "--fib", &text, saved.to_str().unwrap()], None);
    assert!(out.success, "{}", out.stderr);
    std::fs::read(saved).unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Waits for `child` at most `limit`, killing it (and failing) if it is still running: a read
/// of a FIFO must never hang.
fn wait_bounded(mut child: Child, limit: Duration, what: &str) -> std::process::Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().ok();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

/// `--fib /dev/stdin` and `--fib -` read the whole table, its first bytes included, whatever
/// its format: text, gzip, and a saved table (before, the format sniff consumed the first 8
/// bytes of a pipe and the table was read without them).
#[test]
fn a_table_on_a_pipe_is_read_from_its_first_byte() {
    let dir = tempfile::tempdir().unwrap();
    let saved = saved_table(dir.path());
    let inputs: [(&str, Vec<u8>); 4] = [
        ("text", SMALL_FIB.as_bytes().to_vec()),
        ("gzip", gzip(SMALL_FIB.as_bytes())),
        ("saved", saved.clone()),
        ("gzipped saved", gzip(&saved)),
    ];
    for (what, bytes) in &inputs {
        for fib in ["/dev/stdin", "-"] {
            let out = ipfib(&lookup_args(fib), Some(bytes));
            assert!(out.success, "{what} on {fib}: {}", out.stderr);
            assert_eq!(out.stdout, expected(), "{what} on {fib}");
        }
        // `save` from a pipe, then the saved file answers the same.
        let copy = dir.path().join("copy.ipfib");
        let out = ipfib(
            &["save", "--fib", "/dev/stdin", copy.to_str().unwrap()],
            Some(bytes),
        );
        assert!(out.success, "save of {what} from a pipe: {}", out.stderr);
        let out = ipfib(&lookup_args(copy.to_str().unwrap()), None);
        assert_eq!(out.stdout, expected(), "saved from a pipe: {what}");
    }
}

/// A named FIFO is opened and read once: no race with its writer, no hang after the writer
/// closes it (a second open would wait for a writer that never comes).
#[test]
fn a_table_in_a_named_fifo_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let saved = saved_table(dir.path());
    let fifo = dir.path().join("table.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("SKIP: mkfifo is not available here");
        return;
    }
    for (what, bytes) in [("text", SMALL_FIB.as_bytes().to_vec()), ("saved", saved)] {
        let child = Command::new(env!("CARGO_BIN_EXE_ipfib"))
            .args(lookup_args(fifo.to_str().unwrap()))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut f = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
                f.write_all(&bytes).unwrap();
            })
        };
        let out = wait_bounded(child, Duration::from_secs(60), what);
        writer.join().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{what} from a FIFO: {stderr}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected(), "{what}");
    }
}

/// Starts `ipfib lookup --fib FIB [extra]` reading addresses from a pipe.
fn running_lookup(fib: &Path, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ipfib"))
        .args(["lookup", "--fib", fib.to_str().unwrap()])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// One chunk of `lookup`'s stdin (it answers 64 Ki addresses at a time): the probes repeated.
fn chunk() -> (String, Vec<&'static str>) {
    let mut text = String::new();
    let mut want = Vec::new();
    for i in 0..(1 << 16) {
        let (q, a) = PROBES[i % PROBES.len()];
        text.push_str(q);
        text.push('\n');
        want.push(a);
    }
    (text, want)
}

/// Reads `want.len()` answer lines and compares them.
fn expect_answers(out: &mut impl BufRead, want: &[&str], what: &str) {
    let mut line = String::new();
    for (i, w) in want.iter().enumerate() {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "{what}: output ended at line {i}"
        );
        assert_eq!(line.trim_end(), *w, "{what}: line {i}");
    }
}

/// A saved table is read into memory by default: truncating its file and writing other bytes
/// into it while `lookup` runs changes no answer and crashes nothing. (Mapped, the way it was
/// opened before, the next lookup died with SIGBUS.) With `--mmap` the contract is the user's,
/// as its help says; a rename over the file stays safe there too.
#[test]
fn a_saved_file_truncated_and_overwritten_under_a_running_lookup() {
    let dir = tempfile::tempdir().unwrap();
    let saved = saved_table(dir.path());
    let path = dir.path().join("live.ipfib");
    let (text, want) = chunk();
    for (extra, clobber) in [(&[][..], true), (&["--mmap"][..], false)] {
        std::fs::write(&path, &saved).unwrap();
        let mut child = running_lookup(&path, extra);
        let mut input = child.stdin.take().unwrap();
        let mut output = BufReader::new(child.stdout.take().unwrap());
        input.write_all(text.as_bytes()).unwrap();
        input.flush().unwrap();
        expect_answers(&mut output, &want, "before the change");
        if clobber {
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len(0).unwrap();
            drop(f);
            std::fs::write(&path, b"10.0.0.0/8 77\n").unwrap();
        } else {
            // Replaced by rename, as `ipfib save` does: the mapping keeps the old file.
            let other = dir.path().join("other.ipfib");
            std::fs::write(&other, b"10.0.0.0/8 77\n").unwrap();
            std::fs::rename(&other, &path).unwrap();
        }
        input.write_all(text.as_bytes()).unwrap();
        drop(input);
        expect_answers(&mut output, &want, "after the change");
        let status = child.wait().unwrap();
        assert!(status.success(), "{extra:?}: {status}");
    }
}

/// `convert` and `save` given a symlink write through it: the file it points to gets the new
/// content, and the link is still a link (before, it was replaced by a regular file).
#[test]
fn outputs_are_written_through_symlinks() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_file(dir.path(), "in.txt", SMALL_FIB.as_bytes());
    std::fs::create_dir(dir.path().join("real")).unwrap();
    for (cmd, name) in [("convert", "t.txt"), ("save", "t.ipfib")] {
        let target = dir.path().join("real").join(name);
        std::fs::write(&target, b"old\n").unwrap();
        // A relative link to a relative link, as deployments often have.
        let link1 = dir.path().join(format!("{name}.link1"));
        let link2 = dir.path().join(format!("{name}.link2"));
        std::os::unix::fs::symlink(PathBuf::from("real").join(name), &link1).unwrap();
        std::os::unix::fs::symlink(link1.file_name().unwrap(), &link2).unwrap();
        let out = match cmd {
            "convert" => ipfib(&["convert", &input, link2.to_str().unwrap()], None),
            _ => ipfib(&["save", "--fib", &input, link2.to_str().unwrap()], None),
        };
        assert!(out.success, "{cmd}: {}", out.stderr);
        for link in [&link1, &link2] {
            let meta = std::fs::symlink_metadata(link).unwrap();
            assert!(
                meta.file_type().is_symlink(),
                "{cmd}: {} is still a link",
                link.display()
            );
        }
        let out = ipfib(&lookup_args(target.to_str().unwrap()), None);
        assert_eq!(
            out.stdout,
            expected(),
            "{cmd}: the link's target has the new table"
        );
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("real"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            leftovers.len(),
            1,
            "{cmd}: no temporary file left: {leftovers:?}"
        );
        std::fs::remove_file(&target).unwrap();
    }
}

/// SIGINT or SIGTERM while an output is being written (`save`, `convert` and `gen` share the
/// writer) removes the hidden temporary file beside the target, leaves the target as it was,
/// and the process still ends by the signal.
#[test]
fn an_interrupted_write_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let fib = write_file(dir.path(), "small.txt", SMALL_FIB.as_bytes());
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let out = dir.path().join("trace.txt.gz");
        std::fs::write(&out, b"old\n").unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_ipfib"))
            .args([
                "gen", "trace", "--fib", &fib, "--family", "4", "--kind", "uniform",
            ])
            .args(["--count", "20000000", "--out", out.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait until the temporary file exists (the write is under way), then interrupt.
        let start = Instant::now();
        let tmp = loop {
            let found = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .find(|n| n.starts_with(".trace.txt.gz.tmp"));
            if let Some(n) = found {
                break n;
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "gen ended before writing"
            );
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "no temporary file appeared"
            );
            std::thread::sleep(Duration::from_millis(5));
        };
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            status.signal(),
            Some(signal),
            "ended by the signal: {status}"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(!names.contains(&tmp), "{tmp} was left behind: {names:?}");
        assert_eq!(
            std::fs::read(&out).unwrap(),
            b"old\n",
            "the target is untouched"
        );
    }
}

/// Under an address-space limit too small for the table, the load ends with a message that
/// says what could not be allocated, while reading which file, and the limit (status 1), not
/// with Rust's bare `memory allocation of N bytes failed` and SIGABRT.
#[test]
fn running_out_of_memory_says_what_and_where() {
    let dir = tempfile::tempdir().unwrap();
    // 3 Mi host routes (about 50 MB of text): far more than 64 MiB of address space holds.
    let mut text = String::with_capacity(3 << 24);
    for i in 0u32..3 << 20 {
        let a = std::net::Ipv4Addr::from(0x0a00_0000 | i);
        text.push_str(&format!("{a}/32 {}\n", i % 7));
    }
    let fib = write_file(dir.path(), "big.txt", text.as_bytes());
    drop(text);
    let script = format!(
        "ulimit -v 65536 && exec '{}' lookup --fib '{fib}' 10.0.0.1",
        env!("CARGO_BIN_EXE_ipfib")
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("ipfib: out of memory: could not allocate"),
        "{stderr}"
    );
    assert!(stderr.contains("big.txt"), "names the file: {stderr}");
    assert!(
        stderr.contains("ulimit -v, is 67108864 bytes (64 MiB)"),
        "{stderr}"
    );
}
