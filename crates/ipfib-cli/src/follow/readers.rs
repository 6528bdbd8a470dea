//! `--readers N`: threads looking up a trace in the live table while routes arrive (the lookup
//! load of a data plane beside the station), each block of lookups counted, so every progress
//! interval reports the lookup rate beside that interval's updates: the rate while updates
//! are published against the rate in quiet intervals of the same run.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::thread::{Scope, ScopedJoinHandle};

use anyhow::Context;
use ipfib::LiveFib;

use crate::replay::load::{self, Trace};

/// Lookups per batch call (the replay's default: the engines' batched path).
const BATCH: usize = 64;

/// The reader threads' trace: the addresses of `path` (a trace file, both families).
pub fn trace(path: &Path) -> anyhow::Result<Trace> {
    let (v4, v6) = crate::addresses::read_both(path)
        .with_context(|| format!("--reader-trace {}", path.display()))?;
    Ok(Trace { v4, v6 })
}

/// Starts `threads` readers of `live` in scope `s`, adding their lookups to `counted` until
/// `stop` is set.
pub fn start<'scope, 'env>(
    s: &'scope Scope<'scope, 'env>,
    threads: usize,
    trace: &'env Trace,
    live: &'env LiveFib,
    stop: &'env AtomicBool,
    counted: &'env AtomicU64,
) -> Vec<ScopedJoinHandle<'scope, (u64, f64)>> {
    (0..threads)
        .map(|i| {
            s.spawn(move || {
                load::run_thread(live.reader(), trace, i, threads, BATCH, stop, counted)
            })
        })
        .collect()
}
