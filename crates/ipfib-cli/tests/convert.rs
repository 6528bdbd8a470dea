//! `ipfib convert`: MRT and text in, text out (file, gzip, stdout), and the table survives the
//! round trip through the text format exactly.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Output};

use ipfib_io::{load_fib, LoadOptions, PeerChoice, ValueKind};

fn ipfib(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ipfib"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn gunzip(path: &Path) -> String {
    let mut out = String::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut out)
        .unwrap();
    out
}

const RIB: &str = "mrt/rib/routeviews6.rib.20151101.0600.first6870prefixes.gz";

#[test]
fn mrt_to_gzip_text_round_trips_for_every_value_kind() {
    let Some(rib) = ipfib_testdata::shared_file(RIB) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (peer, value) in [
        ("best", ValueKind::NextHop),
        ("best", ValueKind::OriginAs),
        ("3", ValueKind::Peer),
        ("2001:470:0:1a::1", ValueKind::NextHop),
    ] {
        let out = dir.path().join("table.txt.gz");
        let run = ipfib(&[
            "convert",
            s(&rib),
            s(&out),
            "--peer",
            peer,
            "--value",
            value.name(),
        ]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );

        let text = gunzip(&out);
        let header = text.lines().next().unwrap();
        assert!(header.starts_with("# ipfib convert: from "), "{header}");
        assert!(header.contains("MRT TABLE_DUMP_V2"), "{header}");
        assert!(
            header.contains(&format!("peer={peer} value={}", value.name())),
            "{header}"
        );

        let options = LoadOptions {
            peer: peer.parse::<PeerChoice>().unwrap(),
            value,
            skip_bad_records: false,
            allow_empty: false,
        };
        let direct = load_fib(&rib, &options).unwrap();
        assert!(!direct.is_empty());
        let round_trip = load_fib(&out, &LoadOptions::default()).unwrap();
        assert_eq!(round_trip, direct, "peer {peer}, value {value}");
        assert_eq!(
            text.lines().count(),
            direct.len() + 1,
            "one line per route plus the header"
        );
    }
}

#[test]
fn stdout_output_and_text_input() {
    let Some(table) = ipfib_testdata::shared_file("ipv6/ipv6-routeviews6-20150922-bestpath.txt.gz")
    else {
        return;
    };
    let run = ipfib(&["convert", s(&table), "-"]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stdout = String::from_utf8(run.stdout).unwrap();
    assert!(stdout.starts_with("# ipfib convert: from "));
    assert!(
        stdout.lines().next().unwrap().contains("(text)"),
        "text input has no MRT options"
    );

    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.txt");
    std::fs::write(&copy, &stdout).unwrap();
    let original = load_fib(&table, &LoadOptions::default()).unwrap();
    assert_eq!(load_fib(&copy, &LoadOptions::default()).unwrap(), original);
    assert_eq!(
        original.len(),
        25_878,
        "the README's route count for this table"
    );
}

#[test]
fn a_truncated_rib_fails_with_its_offset_and_leaves_no_output_unless_skipping() {
    let Some(rib) = ipfib_testdata::shared_file(RIB) else {
        return;
    };
    let mut stream = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(&rib).unwrap())
        .read_to_end(&mut stream)
        .unwrap();
    // Walk the record headers past the first 100 records (the PEER_INDEX_TABLE and 99
    // prefixes) and cut 30 bytes into the next one.
    let mut at = 0usize;
    for _ in 0..100 {
        at += 12 + u32::from_be_bytes(stream[at + 8..at + 12].try_into().unwrap()) as usize;
    }
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.mrt");
    std::fs::write(&cut, &stream[..at + 30]).unwrap();
    let out = dir.path().join("out.txt");

    let run = ipfib(&["convert", s(&cut), s(&out)]);
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains(&format!("at byte offset {at}: truncated")),
        "{stderr}"
    );
    assert!(!out.exists(), "no partial output");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary left behind"
    );

    let run = ipfib(&["convert", "--skip-bad-records", s(&cut), s(&out)]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    // The warning says the file is cut short, where, and how many bytes were lost.
    assert!(
        stderr.contains("skipped 1 unreadable MRT record"),
        "{stderr}"
    );
    assert!(
        stderr.contains("TRUNCATED") && stderr.contains("table is incomplete"),
        "{stderr}"
    );
    // The 99 whole prefix records made it, the cut one did not.
    let fib = load_fib(&out, &LoadOptions::default()).unwrap();
    assert_eq!(fib.len(), 99);
}

#[test]
fn an_updates_file_is_refused() {
    let Some(updates) = ipfib_testdata::shared_file("mrt/updates/rrc06.updates.20150401.0000.gz")
    else {
        return;
    };
    let run = ipfib(&["convert", s(&updates), "-"]);
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("updates file"));
}
