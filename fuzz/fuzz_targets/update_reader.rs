//! The MRT update reader and the BGP UPDATE checks on arbitrary bytes: never a panic, short
//! errors; what the strict reader accepts the tolerant one accepts identically, with nothing
//! skipped; a skip always says why.

#![no_main]

use std::io::Cursor;
use std::path::Path;

use ipfib_io::updates::read_updates_from;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ipfib_io::bgp::check_update(data, false);
    let _ = ipfib_io::bgp::check_update(data, true);
    let _ = ipfib_io::bgp::split_message(data);
    let read = |skip| {
        read_updates_from(
            Box::new(Cursor::new(data.to_vec())),
            Path::new("fuzz.mrt"),
            skip,
        )
        .map_err(|e| {
            let msg = e.to_string();
            assert!(msg.len() <= 4000, "error message of {} bytes", msg.len());
            msg
        })
    };
    let strict = read(false);
    let tolerant = read(true);
    if let Ok((records, report)) = &strict {
        let (r2, rep2) = tolerant
            .as_ref()
            .expect("strict read passed, tolerant failed");
        assert_eq!(records, r2);
        assert_eq!((report.skipped, rep2.skipped), (0, 0));
    }
    if let Ok((_, report)) = &tolerant {
        assert_eq!(report.skipped > 0, report.first_skipped.is_some());
        assert_eq!(
            report.ignored,
            report.ignored_by_reason.values().sum::<u64>()
        );
    }
});
