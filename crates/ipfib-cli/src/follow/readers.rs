//! `--readers N`: threads looking up a trace in the live table while routes arrive (the lookup
//! load of a data plane beside the station), each block of lookups counted, so every progress
//! interval reports the lookup rate beside that interval's updates: the rate while updates
//! are published against the rate in quiet intervals of the same run. With `--reader-cpus`
//! the readers are pinned, one CPU each in turn, and the rest of the process (station,
//! rebuilder, sessions) kept off those CPUs: a data plane's lookup cores beside its control
//! plane.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::thread::{Scope, ScopedJoinHandle};

use anyhow::Context;
use ipfib::LiveFib;

use crate::bench::cpu;
use crate::replay::load::{self, Trace};

/// Lookups per batch call (the replay's default: the engines' batched path).
const BATCH: usize = 64;

/// The reader threads' trace: the addresses of `path` (a trace file, both families).
pub fn trace(path: &Path) -> anyhow::Result<Trace> {
    let (v4, v6) = crate::addresses::read_both(path)
        .with_context(|| format!("--reader-trace {}", path.display()))?;
    Ok(Trace { v4, v6 })
}

/// Keeps the calling thread, and every thread it starts from now on, off `reader_cpus` (the
/// CPUs this process may use minus those). Call before anything else starts threads.
pub fn keep_off(reader_cpus: &[usize]) -> anyhow::Result<()> {
    let allowed = cpu::allowed();
    if let Some(c) = reader_cpus.iter().find(|c| !allowed.contains(c)) {
        anyhow::bail!("--reader-cpus: CPU {c} is not one this process may use ({allowed:?})");
    }
    let rest: Vec<usize> = allowed
        .into_iter()
        .filter(|c| !reader_cpus.contains(c))
        .collect();
    // With no CPU left over, everything shares the readers' CPUs, as without the option.
    if !rest.is_empty() && !cpu::pin_current_to(&rest) {
        anyhow::bail!("--reader-cpus: the kernel refused to pin the station to {rest:?}");
    }
    Ok(())
}

/// Starts `threads` readers of `live` in scope `s` (reader `i` pinned to `cpus[i % len]` when
/// `cpus` is not empty), adding their lookups to `counted` until `stop` is set.
pub fn start<'scope, 'env>(
    s: &'scope Scope<'scope, 'env>,
    threads: usize,
    cpus: &'env [usize],
    trace: &'env Trace,
    live: &'env LiveFib,
    stop: &'env AtomicBool,
    counted: &'env AtomicU64,
) -> Vec<ScopedJoinHandle<'scope, (u64, f64)>> {
    (0..threads)
        .map(|i| {
            s.spawn(move || {
                if !cpus.is_empty() && !cpu::pin_current(cpus[i % cpus.len()]) {
                    note!("ipfib follow: reader {i} could not be pinned; it runs unpinned");
                }
                load::run_thread(live.reader(), trace, i, threads, BATCH, stop, counted)
            })
        })
        .collect()
}
