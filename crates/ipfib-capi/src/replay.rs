//! `ipfib_replay`: a real BGP update stream turned into route changes, and submitted to a live
//! table at the pace it was recorded (what `ipfib replay` does, for C programs such as the
//! DPDK forwarding example, which replays a stream while it forwards).
//!
//! The rules (which peer's routes, which next hop) are `ipfib replay`'s, from
//! `ipfib_io::replay`: one stream means the same table in the CLI, here and in Rust.

use std::ffi::{c_char, c_int};
use std::time::Instant;

use ipfib::Table;
use ipfib_io::replay::{self, Peers, Speed, Timed, Visibility};

use crate::ffi::{call, path_arg, str_arg, text};
use crate::live::{ipfib_live, with_live};
use crate::table::ipfib_table;

/// An update stream's route changes over a base table, ready to replay. Read-only after
/// ipfib_replay_load: any number of threads may use it at once.
pub struct ipfib_replay {
    changes: Vec<Timed>,
    last: Table,
}

/// What ipfib_replay_run did.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct ipfib_replay_result {
    /// Route changes submitted.
    pub updates: u64,
    /// Versions the live table published during the run (up to the final flush).
    pub publishes: u64,
    /// Seconds from the first submission until the last change was visible.
    pub seconds: f64,
    /// Microseconds from a change's submission to the publish that made it visible: median.
    pub visible_us_p50: f64,
    /// The same, 99th percentile.
    pub visible_us_p99: f64,
    /// The same, the longest.
    pub visible_us_max: f64,
}

/// Reads the update stream at `updates` (MRT BGP4MP / BGP4MP_ET, or the text form
/// `ts A|W prefix peer [next_hop]`; plain, gzip or bzip2) and turns it into route changes over
/// `base` (NULL: an empty table; only read during the call) by `ipfib replay`'s rules: `peer`
/// is "all" (every peer merged, the lowest peer address wins, base routes kept under the
/// peers') or one peer's IP address (NULL = "all"); next hops are the stream's BGP next-hop
/// addresses numbered 1, 2, ... by first appearance. On error (a file that cannot be read, a
/// malformed record, named by line or byte offset; a stream with no change for `peer`)
/// returns NULL and writes a message into err (if not NULL). Free it with ipfib_replay_free.
///
/// # Safety
/// `updates` and `peer` are NULL or NUL-terminated strings; `base` is NULL or a route set no
/// other thread changes during the call; `err` is NULL or points to `errlen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ipfib_replay_load(
    updates: *const c_char,
    base: *const ipfib_table,
    peer: *const c_char,
    err: *mut c_char,
    errlen: usize,
) -> *mut ipfib_replay {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        call(err, errlen, std::ptr::null_mut(), || {
            let path = path_arg(updates)?;
            let peers: Peers = match str_arg(peer) {
                None => Peers::All,
                Some(p) => p
                    .to_str()
                    .map_err(|_| "the peer is not UTF-8".to_string())?
                    .parse()?,
            };
            let empty = Table::new();
            let base = base.as_ref().map_or(&empty, |t| &t.table);
            let (records, _) = ipfib_io::read_updates(path, false).map_err(|e| text(&e))?;
            let (changes, last) = replay::plan(&records, base, &peers);
            if changes.is_empty() {
                return Err(format!(
                    "{}: no route changes for peer {peers} ({} records read)",
                    path.display(),
                    records.len()
                ));
            }
            Ok(Box::into_raw(Box::new(ipfib_replay { changes, last })))
        })
    }
}

/// Frees a replay (NULL ok).
///
/// # Safety
/// `replay` is NULL or a replay not freed before, that no other thread uses any more.
#[no_mangle]
pub unsafe extern "C" fn ipfib_replay_free(replay: *mut ipfib_replay) {
    // SAFETY: the caller's contract, passed on.
    unsafe { crate::ffi::free(replay) }
}

/// The number of route changes (0 for NULL).
///
/// # Safety
/// `replay` is NULL or a replay.
#[no_mangle]
pub unsafe extern "C" fn ipfib_replay_len(replay: *const ipfib_replay) -> usize {
    // SAFETY: the caller's contract.
    unsafe { replay.as_ref() }.map_or(0, |r| r.changes.len())
}

/// Recorded seconds from the first change to the last (0 for NULL).
///
/// # Safety
/// `replay` is NULL or a replay.
#[no_mangle]
pub unsafe extern "C" fn ipfib_replay_span(replay: *const ipfib_replay) -> f64 {
    // SAFETY: the caller's contract.
    let last = unsafe { replay.as_ref() }.and_then(|r| r.changes.last());
    last.map_or(0.0, |c| c.at_us as f64 / 1e6)
}

/// The route set after every change (a new copy, to check a live table against or to build
/// another structure from; free it with ipfib_table_free), or NULL for a NULL replay.
///
/// # Safety
/// `replay` is NULL or a replay.
#[no_mangle]
pub unsafe extern "C" fn ipfib_replay_final(replay: *const ipfib_replay) -> *mut ipfib_table {
    // SAFETY: the caller's contract.
    match unsafe { replay.as_ref() } {
        Some(r) => ipfib_table::boxed(r.last.clone()),
        None => std::ptr::null_mut(),
    }
}

/// Submits the changes to `live` at the recorded pace × `speed` (`speed` ≤ 0 or infinite: as
/// fast as the live table takes them), changes recorded at the same time as one batch, then
/// flushes; blocks until then (call it from a control thread while others look up). Fills
/// `out` (if not NULL) and returns 0; on error (NULL replay or live table, a NaN speed, a
/// speed so small a change would be due past the clock's range, a change the live table
/// refuses) returns -1 with the message, the changes submitted before it kept. One replay at
/// a time per live table (the run records the table's publishes to time them).
///
/// # Safety
/// `replay` and `live` are NULL or valid; `out` is NULL or writable; `err` is NULL or points
/// to `errlen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ipfib_replay_run(
    replay: *const ipfib_replay,
    live: *const ipfib_live,
    speed: f64,
    out: *mut ipfib_replay_result,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    // SAFETY: the caller's contract for every pointer.
    unsafe {
        let Some(replay) = replay.as_ref() else {
            return call(err, errlen, -1, || Err("the replay is NULL".into()));
        };
        with_live(live, err, errlen, -1, |live| {
            if speed.is_nan() {
                return Err("the speed is NaN".into());
            }
            let speed = if speed > 0.0 && speed.is_finite() {
                Speed::Times(speed)
            } else {
                Speed::Max
            };
            live.record_publishes(true);
            let _ = live.take_publishes();
            let start = Instant::now();
            let submitted = replay::submit(live, &replay.changes, speed, |_| {})
                .map_err(|e| text(&e))
                .and_then(|s| live.flush().map(|()| s).map_err(|e| text(&e)));
            let publishes = live.take_publishes();
            live.record_publishes(false);
            let submissions = submitted?;
            let seen = replay::visibility(&submissions, &publishes);
            let end = publishes.last().map_or_else(Instant::now, |p| p.at);
            let result = ipfib_replay_result {
                updates: replay.changes.len() as u64,
                publishes: publishes.len() as u64,
                seconds: end.saturating_duration_since(start).as_secs_f64(),
                visible_us_p50: Visibility::percentile(&seen.total, 0.5),
                visible_us_p99: Visibility::percentile(&seen.total, 0.99),
                visible_us_max: seen.total.last().copied().unwrap_or(0.0),
            };
            if let Some(out) = out.as_mut() {
                *out = result;
            }
            Ok(0)
        })
    }
}
