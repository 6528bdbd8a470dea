//! The MRT reader on arbitrary bytes, strict and with `skip_bad_records`: never a panic, never
//! a runaway allocation, short errors; what the strict reader accepts the tolerant one accepts
//! identically; and a tolerant report's byte counts stay inside the input.

#![no_main]

use std::io::Cursor;
use std::path::Path;

use ipfib_io::mrt::RibReader;
use ipfib_io::LoadOptions;
use libfuzzer_sys::fuzz_target;

fn load(
    data: &[u8],
    skip_bad_records: bool,
) -> Result<(ipfib::Table, ipfib_io::LoadReport), String> {
    let options = LoadOptions {
        skip_bad_records,
        allow_empty: true,
        ..Default::default()
    };
    ipfib_io::load_fib_from(Cursor::new(data.to_vec()), Path::new("fuzz.mrt"), &options).map_err(
        |e| {
            let msg = e.to_string();
            assert!(
                msg.len() <= 4000,
                "error message of {} bytes: {msg}",
                msg.len()
            );
            msg
        },
    )
}

fuzz_target!(|data: &[u8]| {
    let strict = load(data, false);
    let tolerant = load(data, true);
    if let Ok((table, report)) = &strict {
        let (t2, r2) = tolerant
            .as_ref()
            .expect("strict load passed, tolerant failed");
        assert_eq!(table, t2);
        assert_eq!(
            r2.skipped_records + r2.skipped_paths + r2.repaired_records,
            0
        );
        assert_eq!(report.truncated_at, None);
    }
    if let Ok((_, report)) = &tolerant {
        if report.format.is_mrt() {
            assert!(
                report.bytes_read <= data.len() as u64
                    || data.starts_with(&[0x1f, 0x8b])
                    || data.starts_with(b"BZh")
            );
            assert!(report.skipped_bytes <= report.bytes_read);
            if let Some(at) = report.truncated_at {
                assert!(at <= report.bytes_read);
                assert!(report.warnings().iter().any(|w| w.contains("TRUNCATED")));
            }
        }
    }
    // Every path, through the lower-level reader.
    for tolerant in [false, true] {
        if let Ok(reader) = RibReader::from_reader(
            Box::new(Cursor::new(data.to_vec())),
            Path::new("fuzz.mrt"),
            tolerant,
        ) {
            for route in reader {
                match route {
                    Ok(r) => assert_eq!(r.prefix, r.prefix.trunc(), "host bits in {}", r.prefix),
                    Err(_) => break,
                }
            }
        }
    }
});
