//! Damaged and unusual MRT input: truncation (error naming the offset, or a counted skip), the
//! early-RIS length bug, update files given as a RIB, and format detection by content.

#![cfg(feature = "mrt")]

mod mrt_support;

use std::io::Write;

use ipfib_io::LoadError;
use ipfib_io::{load_fib, load_fib_with_report, FileFormat, LoadOptions};
use mrt_support::{data_file, decompressed, record_offsets, temp_dir};

const RIB: &str = "mrt/rib/rrc00.bview.20020722.2337.gz";

fn skip() -> LoadOptions {
    LoadOptions {
        skip_bad_records: true,
        ..LoadOptions::default()
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn a_cut_record_is_an_error_at_its_offset_or_a_counted_skip() {
    let Some(rib) = data_file(RIB) else { return };
    let stream = decompressed(&rib);
    let offsets = record_offsets(&stream);
    let dir = temp_dir("mrt-cut");
    // Cut in the middle of record 1000's body, then in the middle of record 2000's header.
    for (k, into) in [(1000usize, 12 + 20), (2000, 7)] {
        let start = offsets[k] as usize;
        let cut = &stream[..start + into];
        for (name, bytes) in [("cut.mrt", cut.to_vec()), ("cut.mrt.gz", gzip(cut))] {
            let path = dir.join(name);
            std::fs::write(&path, bytes).unwrap();
            match load_fib(&path, &LoadOptions::default()) {
                Err(LoadError::Record {
                    offset,
                    reason,
                    path: p,
                }) => {
                    assert_eq!(offset, start as u64, "{name}: {reason}");
                    assert!(reason.contains("truncated"), "{reason}");
                    assert_eq!(p, path);
                }
                other => panic!("{name}: expected a record error, got {other:?}"),
            }
            // With the flag: the records before the cut, and the cut one counted.
            let (fib, report) = load_fib_with_report(&path, &skip()).unwrap();
            assert_eq!(report.skipped_records, 1);
            assert_eq!(report.records, k as u64);
            let whole_records = dir.join("whole.mrt");
            std::fs::write(&whole_records, &stream[..start]).unwrap();
            assert_eq!(
                fib,
                load_fib(&whole_records, &LoadOptions::default()).unwrap()
            );
        }
    }
}

#[test]
fn a_cut_compressed_file_is_an_error_not_a_short_table() {
    let Some(rib) = data_file(RIB) else { return };
    let gz = std::fs::read(&rib).unwrap();
    let dir = temp_dir("mrt-cutgz");
    let path = dir.join("cut.gz");
    std::fs::write(&path, &gz[..gz.len() / 2]).unwrap();
    let err = load_fib(&path, &LoadOptions::default()).unwrap_err();
    assert!(matches!(err, LoadError::Record { .. }), "{err}");
    assert!(err.to_string().contains("cut.gz"), "{err}");
}

#[test]
fn the_early_ris_length_bug_needs_the_flag_and_then_loads_everything() {
    let Some(rib) = data_file("mrt/rib/rrc00.bview.20000111.0032.gz") else {
        return;
    };
    match load_fib(&rib, &LoadOptions::default()) {
        Err(LoadError::Record { offset, reason, .. }) => {
            assert_eq!(offset, 0);
            assert!(
                reason.contains("early RIS") && reason.contains("--skip-bad-records"),
                "{reason}"
            );
        }
        other => panic!("expected a record error, got {other:?}"),
    }
    let (fib, report) = load_fib_with_report(&rib, &skip()).unwrap();
    assert_eq!(report.format, FileFormat::MrtTableDump);
    assert_eq!(report.skipped_records + report.skipped_paths, 0);
    assert!(report.repaired_records > 0);

    // bgpkit-parser's own reader (which also corrects this bug) sees the same paths and
    // prefixes: an independent framing of the same file.
    let stream = decompressed(&rib);
    let mut input = &stream[..];
    let (mut paths, mut prefixes) = (0u64, std::collections::HashSet::new());
    loop {
        match bgpkit_parser::parse_mrt_record(&mut input) {
            Ok(record) => {
                use bgpkit_parser::models::MrtMessage;
                let entries = match record.message {
                    MrtMessage::TableDumpMessage(m) => vec![m],
                    MrtMessage::TableDumpMessageBatch(v) => v,
                    other => panic!("unexpected record {other:?}"),
                };
                for e in entries {
                    paths += 1;
                    prefixes.insert(e.prefix.prefix);
                }
            }
            Err(e) if matches!(e.error, bgpkit_parser::ParserError::EofExpected) => break,
            Err(e) => panic!("bgpkit-parser: {e}"),
        }
    }
    assert_eq!(report.paths, paths);
    assert_eq!(fib.len(), prefixes.len());
}

#[test]
fn an_updates_file_is_refused_as_not_a_rib() {
    for f in [
        "mrt/updates/bgpkit-updates.20240914.2230.bz2",
        "mrt/updates/bgpdump-updates.et-header.2015.gz",
    ] {
        let Some(path) = data_file(f) else { return };
        let err = load_fib(&path, &LoadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("updates file") && err.contains("not a RIB"),
            "{err}"
        );
    }
}

#[test]
fn the_format_comes_from_the_content_not_the_name() {
    let Some(rib) = data_file("mrt/rib/bgpdump-bview.64k_stream_overflow.gz") else {
        return;
    };
    let dir = temp_dir("mrt-detect");
    // MRT bytes under a text-like name, plain and compressed.
    let mrt = decompressed(&rib);
    let as_txt = dir.join("table.txt");
    std::fs::write(&as_txt, &mrt).unwrap();
    let (fib, report) = load_fib_with_report(&as_txt, &LoadOptions::default()).unwrap();
    assert_eq!(report.format, FileFormat::MrtTableDumpV2);
    assert_eq!(fib, load_fib(&rib, &LoadOptions::default()).unwrap());
    assert!(!fib.is_empty());

    // Text under an MRT-like name, plain and gzip.
    let text = b"# a table\n10.0.0.0/8 1\n2001:db8::/32 2\n";
    for (name, bytes) in [("rib.mrt", text.to_vec()), ("bview.bz2", gzip(text))] {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let (fib, report) = load_fib_with_report(&path, &LoadOptions::default()).unwrap();
        assert_eq!(report.format, FileFormat::Text, "{name}");
        assert_eq!(fib.len(), 2);
    }

    // Binary that is not MRT (a NUL-laden header with an undefined type) is not read as MRT.
    let junk = dir.join("junk.bin");
    std::fs::write(&junk, [0u8, 0, 0, 0, 0, 99, 0, 0, 0, 0, 0, 0, 1, 2]).unwrap();
    assert!(load_fib(&junk, &LoadOptions::default()).is_err());
}
