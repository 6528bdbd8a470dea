//! `ipfib replay` end to end: a hand-written stream whose final table is worked out by hand,
//! and small real update files of both formats (MRT and text), each ending with the command's
//! own check against the reference engine and the JSON keys the issue fixes.

mod common;

use common::{ipfib, shared_data, write_file, SMALL_FIB};
use serde_json::Value;

const KEYS: [&str; 13] = [
    "final_check",
    "lookup_mlps_during",
    "lookup_mlps_live_idle",
    "lookup_mlps_static",
    "peak_rss_bytes",
    "publishes",
    "stream_ignored",
    "stream_records",
    "stream_skipped_records",
    "updates",
    "visible_us_max",
    "visible_us_p50",
    "visible_us_p99",
];

/// Runs a replay (quick timings) and returns its JSON.
fn replay(extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let mut args = vec![
        "replay",
        "--measure-ms",
        "30",
        "--count",
        "20000",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = ipfib(&args, None);
    assert!(out.success, "{args:?}: {}", out.stderr);
    assert!(out.stdout.contains("final check: ok"), "{}", out.stdout);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    keys.sort_unstable();
    assert_eq!(keys, KEYS, "exactly the documented keys");
    assert_eq!(v["final_check"], "ok");
    v
}

#[test]
fn hand_written_stream_on_a_base_table() {
    let dir = tempfile::tempdir().unwrap();
    let fib = write_file(dir.path(), "fib.txt", SMALL_FIB.as_bytes());
    // Peer .1 replaces 10/8 and withdraws the base's 10.1/16; peer .2's records are other
    // peers' (left out with --peer 192.0.2.1); a fraction of a second paces the replay.
    let updates = write_file(
        dir.path(),
        "u.txt",
        b"# ts kind prefix peer next_hop\n\
          100 A 10.0.0.0/8 192.0.2.1 198.51.100.7\n\
          100.25 W 10.1.0.0/16 192.0.2.1\n\
          100.5 A 2001:db8:2::/48 192.0.2.2 2001:db8::99\n\
          100.5 A 172.16.0.0/12 192.0.2.1 198.51.100.8\n",
    );
    let v = replay(&[
        "--fib",
        &fib,
        "--updates",
        &updates,
        "--peer",
        "192.0.2.1",
        "--speed",
        "10",
    ]);
    assert_eq!(v["updates"], 3);
    // With every peer merged, peer .2's route counts too; the base's 10.1/16 outranks no
    // peer but is never withdrawn by one, and peer .1's 10/8 gets next hop id 1, the base's
    // own value: no change. So: 2001:db8:2::/48 and 172.16/12.
    let v = replay(&["--fib", &fib, "--updates", &updates, "--peer", "all"]);
    assert_eq!(v["updates"], 2);
    // A speed so small that the second record is due beyond the clock's range: an error
    // naming the option, not a panic (which used to leave the reader threads running).
    let out = ipfib(
        &[
            "replay",
            "--updates",
            &updates,
            "--speed",
            "1e-300",
            "--measure-ms",
            "30",
            "--count",
            "1000",
        ],
        None,
    );
    assert!(!out.success);
    assert!(
        out.stderr.contains("speed 1e-300: the update recorded at")
            && !out.stderr.contains("panicked"),
        "{}",
        out.stderr
    );
    // A bad line is an error naming it.
    let bad = write_file(
        dir.path(),
        "bad.txt",
        b"1 A 10.0.0.0/8 1.2.3.4 1.2.3.4\n2 A 10.0.0.1/8 1.2.3.4\n",
    );
    let out = ipfib(&["replay", "--updates", &bad], None);
    assert!(!out.success);
    assert!(
        out.stderr.contains("bad.txt:2: host bits"),
        "{}",
        out.stderr
    );
}

#[test]
fn real_streams_of_both_formats_end_equal_to_the_reference() {
    let Some(data) = shared_data() else {
        return;
    };
    let file = |rel: &str| data.join(rel).to_str().unwrap().to_string();
    // MRT BGP4MP (RIS rrc06, 2 peers), paced at x1000 from empty; BGP4MP_ET; text streams of
    // both line forms, on a real base table, with batched lookups from two threads.
    let rrc06 = file("mrt/updates/rrc06.updates.20150401.0000.gz");
    let v = replay(&["--updates", &rrc06, "--speed", "1000"]);
    assert!(v["publishes"].as_u64().unwrap() > 1, "{v}");
    let et = file("mrt/updates/bgpkit-updates.20240914.2230.bz2");
    replay(&["--updates", &et, "--speed", "max", "--engine", "reference"]);
    let base = file("ipv6/ipv6-linx-20141225.txt.gz");
    let rv6 = file("updates/routeviews6-updates-20151009-1230-15min.txt.gz");
    replay(&[
        "--fib",
        &base,
        "--updates",
        &rv6,
        "--speed",
        "max",
        "--threads",
        "2",
        "--batch",
        "32",
    ]);
    let linx = file("updates/linx-p52-updates-20141217-0000-1h.txt.gz");
    replay(&["--updates", &linx, "--speed", "max"]);
    // The deprecated MRT type 5 (RIS rrc00, 1999): 24,242 records, 21 KEEPALIVEs among them.
    let ris99 = file("mrt/updates-bgpkit-ris-early/rrc00.updates.19990903.1041.gz");
    let v = replay(&["--updates", &ris99, "--speed", "max"]);
    assert_eq!(v["stream_records"], 24_242, "{v}");
    assert_eq!(v["stream_ignored"]["KEEPALIVE messages"], 21, "{v}");
}

/// An MRT BGP4MP_MESSAGE_AS4 record (timestamp 100) from 192.0.2.1 carrying an UPDATE body.
fn bgp4mp_record(update: &[u8]) -> Vec<u8> {
    let mut body = 65001u32.to_be_bytes().to_vec();
    body.extend(65000u32.to_be_bytes());
    body.extend([0, 0, 0, 1, 192, 0, 2, 1, 192, 0, 2, 254]);
    body.extend([0xff; 16]);
    body.extend(((update.len() + 19) as u16).to_be_bytes());
    body.push(2);
    body.extend(update);
    let mut out = 100u32.to_be_bytes().to_vec();
    out.extend([0, 16, 0, 4]);
    out.extend((body.len() as u32).to_be_bytes());
    out.extend(body);
    out
}

/// An UPDATE announcing `nlri` (raw NLRI bytes) with ORIGIN, an empty AS_PATH and next hop
/// 198.51.100.7.
fn announce(nlri: &[u8]) -> Vec<u8> {
    let attrs = [0x40, 1, 1, 0, 0x40, 2, 0, 0x40, 3, 4, 198, 51, 100, 7];
    let mut out = vec![0, 0, 0, attrs.len() as u8];
    out.extend(attrs);
    out.extend(nlri);
    out
}

/// A malformed record between two good ones: strict replay fails naming its offset, and
/// --skip-bad-records skips it whole, counts it in the JSON, and applies the others.
#[test]
fn a_malformed_mrt_record_fails_the_replay_or_is_a_counted_skip() {
    let dir = tempfile::tempdir().unwrap();
    let mut stream = bgp4mp_record(&announce(&[8, 10]));
    let bad_at = stream.len();
    // 172.16/12, then a /33 in the same NLRI.
    stream.extend(bgp4mp_record(&announce(&[12, 172, 16, 33, 1, 2, 3, 4, 5])));
    stream.extend(bgp4mp_record(&announce(&[24, 192, 0, 2])));
    let updates = write_file(dir.path(), "bad.mrt", &stream);
    let out = ipfib(&["replay", "--updates", &updates, "--speed", "max"], None);
    assert!(!out.success, "{}", out.stdout);
    assert!(
        out.stderr
            .contains(&format!("at byte offset {bad_at}: malformed BGP UPDATE"))
            && out.stderr.contains("prefix length 33"),
        "{}",
        out.stderr
    );
    let v = replay(&[
        "--updates",
        &updates,
        "--speed",
        "max",
        "--skip-bad-records",
    ]);
    assert_eq!(v["stream_skipped_records"], 1, "{v}");
    assert_eq!(v["stream_records"], 3, "{v}");
    assert_eq!(v["updates"], 2, "10/8 and 192.0.2/24, not 172.16/12: {v}");
}
