//! Input that is damaged, odd or hostile, through the public entry points: line ends of every
//! kind, files without routes, over-long lines and binary data, long fields in errors, and
//! truncated MRT dumps read with `skip_bad_records`.

mod mrt_support;

use std::io::Write;
use std::path::{Path, PathBuf};

use ipfib::Prefix;
use ipfib_io::text::read_fib_from;
use ipfib_io::{load_fib, load_fib_from, load_fib_with_report, FileFormat, LoadError, LoadOptions};
use mrt_support::{data_file, decompressed, record_offsets, temp_dir, MrtBuilder};

fn p4(s: &str) -> Prefix<u32> {
    Prefix::from_net(s.parse().unwrap()).unwrap()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn allow_empty() -> LoadOptions {
    LoadOptions {
        allow_empty: true,
        ..LoadOptions::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Line ends.

const ROUTES: [&str; 4] = [
    "# header",
    "10.0.0.0/8 1",
    "10.1.0.0/16 2 # comment",
    "2001:db8::/32 3",
];

#[test]
fn lone_cr_crlf_and_lf_line_ends_all_read_the_same_table() {
    let dir = temp_dir("line-ends");
    let lf = ROUTES.join("\n");
    let want = load_fib(
        &write(&dir, "lf.txt", lf.as_bytes()),
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(want.len(), 3);
    for (name, end) in [("cr", "\r"), ("crlf", "\r\n"), ("lfcr", "\n\r")] {
        let text = ROUTES.join(end) + end;
        for (file, bytes) in [
            (format!("{name}.txt"), text.as_bytes().to_vec()),
            (format!("{name}.txt.gz"), gzip(text.as_bytes())),
        ] {
            let path = write(&dir, &file, &bytes);
            let got = load_fib(&path, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got, want, "{file}");
        }
    }
    // Mixed in one file, and a CR at every possible buffer boundary (one-byte reads).
    let mixed = b"10.0.0.0/8 1\r10.1.0.0/16 2\r\n2001:db8::/32 3\n".to_vec();
    let slow = std::io::BufReader::with_capacity(1, &mixed[..]);
    assert_eq!(read_fib_from(slow, Path::new("mixed")).unwrap(), want);
}

#[test]
fn a_bad_line_in_a_cr_only_file_is_named_by_its_own_number() {
    let text = b"# t\r10.0.0.0/8 1\r\r10.0.0.1/8 2\r192.0.2.0/24 3\r";
    match read_fib_from(&text[..], Path::new("cr.txt")) {
        Err(LoadError::Line { line, reason, .. }) => {
            assert_eq!(line, 4, "{reason}");
            assert!(reason.contains("host bits"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    // CRLF counts as one line end, not two.
    let text = b"10.0.0.0/8 1\r\n10.0.0.1/8 2\r\n";
    match read_fib_from(&text[..], Path::new("crlf.txt")) {
        Err(LoadError::Line { line, .. }) => assert_eq!(line, 2),
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Loads without routes.

#[test]
fn a_text_file_without_routes_is_an_error_unless_allowed() {
    let dir = temp_dir("empty-text");
    let cases: [(&str, &[u8]); 5] = [
        ("empty.txt", b""),
        ("blank.txt", b"\n\n  \n"),
        ("comments.txt", b"# nothing\n   # here\n"),
        ("cr-comments.txt", b"# a\r# b\r"),
        ("empty.gz", &[]),
    ];
    for (name, bytes) in cases {
        let bytes = if name.ends_with(".gz") {
            gzip(bytes)
        } else {
            bytes.to_vec()
        };
        let path = write(&dir, name, &bytes);
        let err = load_fib(&path, &LoadOptions::default()).unwrap_err();
        match &err {
            LoadError::Empty { path: p, report } => {
                assert_eq!(p, &path);
                assert_eq!(report.format, FileFormat::Text);
            }
            other => panic!("{name}: {other:?}"),
        }
        let msg = err.to_string();
        assert!(
            msg.starts_with(&path.display().to_string())
                && msg.contains("no routes")
                && msg.contains("allow_empty"),
            "{msg}"
        );
        let (fib, report) = load_fib_with_report(&path, &allow_empty()).unwrap();
        assert!(fib.is_empty());
        assert_eq!(report.format, FileFormat::Text);
    }
}

#[test]
fn dev_null_is_an_empty_load() {
    let null = Path::new("/dev/null");
    if !null.exists() {
        return;
    }
    assert!(matches!(
        load_fib(null, &LoadOptions::default()),
        Err(LoadError::Empty { .. })
    ));
    assert!(load_fib(null, &allow_empty()).unwrap().is_empty());
}

#[test]
fn an_mrt_dump_with_only_its_peer_table_is_an_empty_load() {
    let dir = temp_dir("empty-mrt");
    let mut b = MrtBuilder::new();
    b.peer_table(&[("192.0.2.1", 64500), ("2001:db8::1", 64501)]);
    let path = b.write(&dir, "peers-only.mrt");
    let err = load_fib(&path, &LoadOptions::default()).unwrap_err();
    match &err {
        LoadError::Empty { report, .. } => {
            assert_eq!(report.format, FileFormat::MrtTableDumpV2);
            assert_eq!((report.records, report.paths), (1, 0));
        }
        other => panic!("{other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("no RIB entries") && msg.contains("allow_empty"),
        "{msg}"
    );
    let (fib, report) = load_fib_with_report(&path, &allow_empty()).unwrap();
    assert!(fib.is_empty());
    assert_eq!(report.records, 1);

    // The same from a real dump: its PEER_INDEX_TABLE record alone.
    let Some(rib) = data_file("mrt/rib/routeviews2.rib.20140523.0600.first9072prefixes.gz") else {
        return;
    };
    let stream = decompressed(&rib);
    let offsets = record_offsets(&stream);
    let path = write(&dir, "real-peers-only.mrt", &stream[..offsets[1] as usize]);
    assert!(matches!(
        load_fib(&path, &LoadOptions::default()),
        Err(LoadError::Empty { .. })
    ));
}

// ---------------------------------------------------------------------------------------------
// Over-long lines, binary data, and what errors quote.

#[test]
fn an_over_long_line_is_an_error_naming_file_and_line() {
    let mut text = b"10.0.0.0/8 1\n".to_vec();
    text.extend(std::iter::repeat_n(b'9', 10_000));
    text.extend(b"\n192.0.2.0/24 2\n");
    let dir = temp_dir("long-line");
    for (name, bytes) in [("long.txt", text.clone()), ("long.txt.gz", gzip(&text))] {
        let path = write(&dir, name, &bytes);
        let err = load_fib(&path, &LoadOptions::default()).unwrap_err();
        match &err {
            LoadError::Line { line, reason, .. } => {
                assert_eq!(*line, 2);
                assert!(reason.starts_with("line too long"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        let msg = err.to_string();
        assert!(msg.starts_with(&format!("{}:2: ", path.display())), "{msg}");
        assert!(msg.len() < 300, "{} bytes: {msg}", msg.len());
    }
    // Exactly at the limit is still a line (here a bad one, for its content).
    let mut text = vec![b'#'; ipfib_io::text::MAX_LINE];
    text.extend(b"\n10.0.0.0/8 1\n");
    assert_eq!(read_fib_from(&text[..], Path::new("t")).unwrap().len(), 1);
}

#[test]
fn a_gzip_of_nul_bytes_fails_at_once_with_one_short_error() {
    let dir = temp_dir("nul-gz");
    // 64 MiB of NUL bytes, 64 KiB compressed.
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        e.write_all(&zeros).unwrap();
    }
    let path = write(&dir, "zeros.gz", &e.finish().unwrap());
    let start = std::time::Instant::now();
    let err = load_fib(&path, &LoadOptions::default()).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("line too long") && msg.contains("binary"),
        "{msg}"
    );
    assert!(msg.len() < 300, "{} bytes: {msg}", msg.len());
    assert!(
        start.elapsed().as_secs_f64() < 2.0,
        "took {:?}",
        start.elapsed()
    );

    // A short binary line (NUL bytes, then a line end) says binary too.
    let err = read_fib_from(&b"10.0.0.0/8 1\n\x00\x00\x01\x02 5\n"[..], Path::new("b"))
        .unwrap_err()
        .to_string();
    assert!(err.contains(":2: binary data"), "{err}");
}

#[test]
fn errors_quote_a_short_excerpt_of_long_fields() {
    let long = "1".repeat(3000);
    let cases = [
        format!("{long} 1"),
        format!("10.0.0.0/8 {long}"),
        format!("10.0.0.0/8 1 {long}"),
        format!("{long}/8 1"),
        format!("10.0.0.0/{long} 1"),
        format!("2001:{long}::/32 1"),
        format!("10.0.0.0/8 1 {}", "é".repeat(2000)),
        "x".repeat(4000),
    ];
    for line in cases {
        let text = format!("192.0.2.0/24 1\n{line}\n");
        let err = read_fib_from(text.as_bytes(), Path::new("t.txt")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("t.txt:2: "), "{msg}");
        assert!(msg.len() < 300, "{} bytes: {msg}", msg.len());
    }
}

// ---------------------------------------------------------------------------------------------
// Duplicates.

#[test]
fn duplicates_in_any_order_keep_the_last_route_of_each_prefix() {
    // More lines than the reader keeps before merging, in an order that is neither sorted
    // nor grouped, so merging happens several times mid-file.
    let mut text = String::new();
    let n = 300_000u32;
    for i in 0..n {
        let k = (i * 7919) % 1000;
        text.push_str(&format!("10.{}.{}.0/24 {i}\n", k / 256, k % 256));
    }
    let fib = read_fib_from(text.as_bytes(), Path::new("dups")).unwrap();
    assert_eq!(fib.len(), 1000);
    for k in 0..1000u32 {
        // The last i < n with i*7919 % 1000 == k.
        let last = (0..n).rev().find(|i| (i * 7919) % 1000 == k).unwrap();
        let p = p4(&format!("10.{}.{}.0/24", k / 256, k % 256));
        assert_eq!(fib.v4().get(p), Some(last), "{p}");
    }
}

// ---------------------------------------------------------------------------------------------
// Truncated MRT with skip_bad_records.

#[test]
fn a_truncated_mrt_dump_reports_where_it_stops_and_how_much_was_skipped() {
    let Some(rib) = data_file("mrt/rib/rrc00.bview.20020722.2337.gz") else {
        return;
    };
    let stream = decompressed(&rib);
    let offsets = record_offsets(&stream);
    let dir = temp_dir("mrt-truncated");
    let options = LoadOptions {
        skip_bad_records: true,
        ..LoadOptions::default()
    };
    // Half the stream gone, cut inside a record.
    let k = offsets.len() / 2;
    let start = offsets[k];
    let cut = start as usize + 30;
    let half = &stream[..cut];
    for (name, bytes) in [("half.mrt", half.to_vec()), ("half.mrt.gz", gzip(half))] {
        let path = write(&dir, name, &bytes);
        let (_, report) = load_fib_with_report(&path, &options).unwrap();
        assert_eq!(report.truncated_at, Some(start), "{name}");
        assert_eq!(report.bytes_read, cut as u64);
        assert_eq!(report.skipped_records, 1);
        assert_eq!(report.skipped_bytes, 30);
        assert_eq!(report.records, k as u64);
        let warnings = report.warnings().join("\n");
        assert!(
            warnings.contains("TRUNCATED")
                && warnings.contains(&format!("byte offset {start}"))
                && warnings.contains(&format!("stopped at byte {cut}"))
                && warnings.contains("30 bytes of"),
            "{warnings}"
        );
    }
    // A compressed file cut in half: the decompressor runs dry inside a record.
    let gz = std::fs::read(&rib).unwrap();
    let path = write(&dir, "cut.gz", &gz[..gz.len() / 2]);
    match load_fib_with_report(&path, &options) {
        Ok((_, report)) => {
            let at = report
                .truncated_at
                .expect("a cut file is reported as truncated");
            assert!(at <= report.bytes_read && report.bytes_read < stream.len() as u64);
            assert!(report.warnings().iter().any(|w| w.contains("TRUNCATED")));
        }
        // A cut inside a deflate block may also be corrupt data rather than an early end.
        Err(LoadError::Record { reason, .. }) => assert!(reason.contains("stream"), "{reason}"),
        Err(other) => panic!("{other}"),
    }
    // A whole file reports no truncation, and its length.
    let whole = write(&dir, "whole.mrt", &stream[..start as usize]);
    let (_, report) = load_fib_with_report(&whole, &options).unwrap();
    assert_eq!(report.truncated_at, None);
    assert_eq!(report.bytes_read, start);
    assert_eq!((report.skipped_records, report.skipped_bytes), (0, 0));
    assert!(report.warnings().is_empty(), "{:?}", report.warnings());
}

#[test]
fn an_mrt_header_claiming_a_huge_body_in_a_tiny_file_is_a_short_error() {
    let mut b = MrtBuilder::new();
    b.peer_table(&[("192.0.2.1", 64500)]);
    let mut bytes = b.bytes.clone();
    // A RIB_IPV4_UNICAST header declaring 16 MiB, followed by 10 bytes.
    bytes.extend(1_600_000_000u32.to_be_bytes());
    bytes.extend(13u16.to_be_bytes());
    bytes.extend(2u16.to_be_bytes());
    bytes.extend((16u32 << 20).to_be_bytes());
    bytes.extend([0u8; 10]);
    let err = load_fib_from(
        std::io::Cursor::new(bytes.clone()),
        Path::new("x"),
        &LoadOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("truncated"), "{err}");
    let options = LoadOptions {
        skip_bad_records: true,
        allow_empty: true,
        ..LoadOptions::default()
    };
    let (_, report) = load_fib_from(
        std::io::Cursor::new(bytes.clone()),
        Path::new("x"),
        &options,
    )
    .unwrap();
    assert_eq!(report.truncated_at, Some(b.bytes.len() as u64));
    assert_eq!(report.skipped_bytes, 22);
    assert_eq!(report.bytes_read, bytes.len() as u64);
}

#[test]
fn load_fib_from_reads_any_stream_like_a_file() {
    let text = b"10.0.0.0/8 1\r2001:db8::/32 2\r";
    for bytes in [text.to_vec(), gzip(text)] {
        let (fib, report) = load_fib_from(
            std::io::Cursor::new(bytes),
            Path::new("mem"),
            &LoadOptions::default(),
        )
        .unwrap();
        assert_eq!(fib.len(), 2);
        assert_eq!(report.format, FileFormat::Text);
    }
    let err =
        load_fib_from(std::io::empty(), Path::new("mem"), &LoadOptions::default()).unwrap_err();
    assert!(err.to_string().starts_with("mem: no routes"), "{err}");
}
