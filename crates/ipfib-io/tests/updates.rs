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

/// RIS rrc00 of 1999 is all deprecated MRT type 5 (BGP) records: 24,242 of them, 24,216
/// BGP_UPDATEs from one peer holding 65,286 announcements and 25 withdrawals (counted by an
/// independent walk of the file), the rest state changes, OPENs and KEEPALIVEs.
#[test]
fn type_5_bgp_records_of_1999_are_read() {
    let Some(path) = shared_file("mrt/updates-bgpkit-ris-early/rrc00.updates.19990903.1041.gz")
    else {
        return;
    };
    let (records, report) = read_updates(&path, false).unwrap();
    assert_eq!(report.records, 24_242);
    assert_eq!(counts(&records), (65_286, 25));
    assert_eq!(report.ignored, 26, "{report:?}");
    let reasons: Vec<(&str, u64)> = report
        .ignored_by_reason
        .iter()
        .map(|(k, v)| (*k, *v))
        .collect();
    assert_eq!(
        reasons,
        [
            ("BGP state changes", 4),
            ("KEEPALIVE messages", 21),
            ("OPEN messages", 1)
        ]
    );
    let peers: std::collections::HashSet<_> = records.iter().map(|r| r.peer).collect();
    assert_eq!(peers.len(), 1);
    assert!(records.windows(2).all(|w| w[0].time_us <= w[1].time_us));
}

/// Every real update file of the data set passes the strict reader (the UPDATE checks reject
/// nothing real), and nothing is left out without a reason.
#[test]
fn every_real_update_file_reads_strictly() {
    for rel in [
        "mrt/updates/bgpdump-updates.20020722.2238.gz",
        "mrt/updates/bgpdump-updates.20070211.0141.gz",
        "mrt/updates/bgpdump-updates.20071015.1505.gz",
        "mrt/updates/bgpdump-updates.20100722.2015.gz",
        "mrt/updates/bgpdump-updates.20160811.1600.gz",
        "mrt/updates/bgpdump-updates.et-header.2015.gz",
        "mrt/updates/bgpdump-updates.long_withdrawal.gz",
        "mrt/updates/bgpkit-updates.20240914.2230.bz2",
        "mrt/updates/gobgpdump-updates.20130101.0013-0100.gz",
        "mrt/updates/route-views.jinx.updates.20150401.0000.bz2",
        "mrt/updates/routeviews6.updates.20151009.1230.bz2",
        "mrt/updates/rrc00.updates.20190101.0000.gz",
        "mrt/updates/rrc06.updates.20150401.0000.gz",
        "mrt/updates-bgpkit-ris-early/rrc00.updates.19991214.1621.gz",
        "mrt/updates-bgpkit-ris-early/rrc00.updates.20000102.2014.gz",
        "mrt/updates-bgpkit-ris-early/rrc01.updates.20001104.0124.gz",
        "mrt/updates-bgpkit-ris-early/rrc15.updates.20100227.1600.gz",
        "mrt/updates-bgpkit-ris-early/rrc15.updates.20100227.1610.gz",
    ] {
        let Some(path) = shared_file(rel) else {
            return;
        };
        let (records, report) = read_updates(&path, false).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(
            report.ignored,
            report.ignored_by_reason.values().sum::<u64>(),
            "{rel}"
        );
        println!("{rel}: {} updates, {report:?}", records.len());
    }
}
