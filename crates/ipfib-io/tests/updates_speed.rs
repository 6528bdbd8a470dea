//! How fast the MRT update reader reads the largest update files of the shared data set, and
//! what share of that the UPDATE checks (`ipfib_io::bgp::check_update`) take. Run by hand:
//! `cargo test -p ipfib-io --test updates_speed -- --ignored --nocapture`. Times are the best
//! of five runs; the reader's include decompression, framing, checks and decoding.

#![cfg(feature = "mrt")]

mod mrt_support;

use std::time::Instant;

use ipfib_io::bgp::check_update;
use ipfib_io::read_updates;
use ipfib_testdata::shared_file;

const FILES: [&str; 3] = [
    "mrt/updates/bgpdump-updates.et-header.2015.gz",
    "mrt/updates/rrc00.updates.20190101.0000.gz",
    "mrt/updates/gobgpdump-updates.20130101.0013-0100.gz",
];

fn best_of_5(mut f: impl FnMut()) -> f64 {
    (0..5)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::MAX, f64::min)
}

/// The UPDATE bodies of BGP4MP(_ET) MESSAGE_AS4 records with IPv4 or IPv6 peers.
fn update_bodies(stream: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 12 <= stream.len() {
        let word = |i: usize| u16::from_be_bytes([stream[i], stream[i + 1]]);
        let (kind, subtype) = (word(at + 4), word(at + 6));
        let len = u32::from_be_bytes(stream[at + 8..at + 12].try_into().unwrap()) as usize;
        let mut body = &stream[at + 12..at + 12 + len];
        at += 12 + len;
        if kind == 17 {
            body = &body[4..];
        }
        if !matches!(kind, 16 | 17) || subtype != 4 {
            continue;
        }
        let ip_len = if body[10..12] == [0, 1] { 4 } else { 16 };
        let message = &body[12 + 2 * ip_len..];
        if message[18] == 2 {
            out.push(&message[19..]);
        }
    }
    out
}

#[test]
#[ignore = "a measurement, not a check: run by hand"]
fn update_reader_speed_on_the_largest_files() {
    for rel in FILES {
        let Some(path) = shared_file(rel) else {
            return;
        };
        let mut count = 0;
        let read = best_of_5(|| {
            let (records, report) = read_updates(&path, false).unwrap();
            assert_eq!(report.skipped, 0);
            count = records.len();
        });
        let stream = mrt_support::decompressed(&path);
        let bodies = update_bodies(&stream);
        let check = best_of_5(|| {
            for b in &bodies {
                check_update(std::hint::black_box(b), false).unwrap();
            }
        });
        println!(
            "{rel}: {count} updates; reader {read:.1} ms; check_update on its {} UPDATEs \
             {check:.2} ms",
            bodies.len()
        );
    }
}
