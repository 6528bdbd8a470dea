//! The update-stream readers on the shared data set: the MRT and text versions of the same
//! capture give the same records, and the counts match the data set's README.

use ipfib_io::{read_updates, UpdateKind, UpdateRecord};
use ipfib_testdata::shared_file;

fn counts(records: &[UpdateRecord]) -> (usize, usize) {
    let a = records
        .iter()
        .filter(|r| matches!(r.kind, UpdateKind::Announce { .. }))
        .count();
    (a, records.len() - a)
}

/// The README's counts (announcements / withdrawals) for both formats of two captures, and
/// record-by-record agreement of the two formats.
#[test]
fn mrt_and_text_streams_agree() {
    for (mrt, text, want) in [
        (
            "mrt/updates/rrc00.updates.20190101.0000.gz",
            "updates/ris-rrc00-updates-20190101-0000-5min.txt.gz",
            (159_948, 2_626),
        ),
        (
            "mrt/updates/routeviews6.updates.20151009.1230.bz2",
            "updates/routeviews6-updates-20151009-1230-15min.txt.gz",
            (23_622, 2_020),
        ),
    ] {
        let (Some(mrt), Some(text)) = (shared_file(mrt), shared_file(text)) else {
            return;
        };
        let (m, mreport) = read_updates(&mrt, false).unwrap();
        let (t, _) = read_updates(&text, false).unwrap();
        assert_eq!(mreport.format, "mrt");
        assert_eq!(counts(&m), want, "{}", mrt.display());
        assert_eq!(counts(&t), want, "{}", text.display());
        for (i, (a, b)) in m.iter().zip(&t).enumerate() {
            assert_eq!(
                (a.time_us / 1_000_000, a.peer, a.prefix, a.kind),
                (b.time_us / 1_000_000, b.peer, b.prefix, b.kind),
                "record {i}"
            );
        }
    }
}

#[test]
fn et_timestamps_have_microseconds_and_the_startup_stream_is_complete() {
    let Some(path) = shared_file("mrt/updates/bgpkit-updates.20240914.2230.bz2") else {
        return;
    };
    let (records, report) = read_updates(&path, false).unwrap();
    assert!(!records.is_empty(), "{report:?}");
    assert!(
        records.iter().any(|r| r.time_us % 1_000_000 != 0),
        "BGP4MP_ET microseconds are kept"
    );
    assert!(records.windows(2).all(|w| w[0].time_us <= w[1].time_us));
}

#[test]
fn a_rib_dump_is_not_an_update_stream() {
    let Some(path) = shared_file("mrt/rib/bgpdump-bview.ipv4_unicast_add_path.gz") else {
        return;
    };
    let err = read_updates(&path, false).unwrap_err().to_string();
    assert!(
        err.contains("byte offset 0") && err.contains("RIB dump"),
        "{err}"
    );
}
