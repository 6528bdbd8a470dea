//! `ipfib replay` end to end: a hand-written stream whose final table is worked out by hand,
//! and small real update files of both formats (MRT and text), each ending with the command's
//! own check against the reference engine and the JSON keys the issue fixes.

mod common;

use common::{ipfib, shared_data, write_file, SMALL_FIB};
use serde_json::Value;

const KEYS: [&str; 10] = [
    "final_check",
    "lookup_mlps_during",
    "lookup_mlps_live_idle",
    "lookup_mlps_static",
    "peak_rss_bytes",
    "publishes",
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
        out.stderr.contains("--speed 1e-300") && !out.stderr.contains("panicked"),
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
}
