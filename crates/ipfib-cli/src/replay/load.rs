//! The lookup threads of `ipfib replay` (the same trace, loop and thread count for the static
//! engine, the idle live table and the live table during the replay, so the three MLPS figures
//! compare like with like) and of `ipfib follow --readers`.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use ipfib::{Fib, NextHop, Reader};

/// Addresses looked up, per family (either may be empty).
pub struct Trace {
    pub v4: Vec<u32>,
    pub v6: Vec<u128>,
}

/// Addresses between two checks of the stop flag.
const BLOCK: usize = 4096;
const MISS: NextHop = NextHop::MAX;

/// One thread's way of looking up: the static engine or a live reader handle.
pub trait Lookups: Send {
    fn v4(&mut self, a: u32) -> Option<NextHop>;
    fn v6(&mut self, a: u128) -> Option<NextHop>;
    fn v4_batch(&mut self, a: &[u32], out: &mut [NextHop]);
    fn v6_batch(&mut self, a: &[u128], out: &mut [NextHop]);
}

/// The static engine, called the way `Fib`'s users call it (through the engine objects).
pub struct Static<'a>(pub &'a Fib);

impl Lookups for Static<'_> {
    #[inline]
    fn v4(&mut self, a: u32) -> Option<NextHop> {
        self.0.v4().lookup(a)
    }
    #[inline]
    fn v6(&mut self, a: u128) -> Option<NextHop> {
        self.0.v6().lookup(a)
    }
    fn v4_batch(&mut self, a: &[u32], out: &mut [NextHop]) {
        let _ = self.0.lookup_v4_batch(a, out, MISS);
    }
    fn v6_batch(&mut self, a: &[u128], out: &mut [NextHop]) {
        let _ = self.0.lookup_v6_batch(a, out, MISS);
    }
}

/// One version held for the whole run: the live engines without the per-lookup version check
/// (separates the reader handle's cost from the engines').
pub struct Pinned(pub std::sync::Arc<ipfib::Snapshot>);

impl Lookups for Pinned {
    #[inline]
    fn v4(&mut self, a: u32) -> Option<NextHop> {
        self.0.lookup_v4(a)
    }
    #[inline]
    fn v6(&mut self, a: u128) -> Option<NextHop> {
        self.0.lookup_v6(a)
    }
    fn v4_batch(&mut self, a: &[u32], out: &mut [NextHop]) {
        let _ = self.0.lookup_v4_batch(a, out, MISS);
    }
    fn v6_batch(&mut self, a: &[u128], out: &mut [NextHop]) {
        let _ = self.0.lookup_v6_batch(a, out, MISS);
    }
}

impl Lookups for Reader {
    #[inline]
    fn v4(&mut self, a: u32) -> Option<NextHop> {
        self.lookup_v4(a)
    }
    #[inline]
    fn v6(&mut self, a: u128) -> Option<NextHop> {
        self.lookup_v6(a)
    }
    fn v4_batch(&mut self, a: &[u32], out: &mut [NextHop]) {
        let _ = self.lookup_v4_batch(a, out, MISS);
    }
    fn v6_batch(&mut self, a: &[u128], out: &mut [NextHop]) {
        let _ = self.lookup_v6_batch(a, out, MISS);
    }
}

/// Runs `threads` lookup threads (each starting at its own offset of the trace, looping over
/// it) while `work` runs on the calling thread; returns `work`'s result and the lookup rate in
/// millions per second: the sum of each thread's lookups over its own running time (which
/// covers `work` and the end of the block each thread was in). `batch` ≤ 1: single lookups.
pub fn while_running<L: Lookups, R>(
    trace: &Trace,
    threads: usize,
    batch: usize,
    make: &(dyn Fn() -> L + Sync),
    work: impl FnOnce() -> R,
) -> (R, f64) {
    let stop = AtomicBool::new(false);
    let counted = AtomicU64::new(0);
    std::thread::scope(|s| {
        // Tells the threads to stop however this closure ends: a panic in `work` (or in a
        // spawn) would otherwise leave them looping and the scope waiting for them forever.
        let _stop = StopOnDrop(&stop);
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (stop, counted) = (&stop, &counted);
                s.spawn(move || run_thread(make(), trace, i, threads, batch, stop, counted))
            })
            .collect();
        let result = work();
        stop.store(true, Ordering::Relaxed);
        let rate: f64 = handles
            .into_iter()
            .map(|h| h.join().map_or(0.0, |(n, secs)| n as f64 / secs.max(1e-9)))
            .sum();
        (result, rate / 1e6)
    })
}

/// Sets its flag when dropped (on return or unwind).
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// One thread's loop (thread `index` of `threads`): blocks of the trace, round and round,
/// until told to stop, adding each block's lookups to `counted` (for rates per interval).
/// Returns the lookups it made and the seconds it ran.
pub fn run_thread<L: Lookups>(
    mut l: L,
    trace: &Trace,
    index: usize,
    threads: usize,
    batch: usize,
    stop: &AtomicBool,
    counted: &AtomicU64,
) -> (u64, f64) {
    let start = Instant::now();
    let mut out = vec![0; batch.max(1)];
    let mut done = 0u64;
    let mut sum = 0u32;
    let (n4, n6) = (trace.v4.len(), trace.v6.len());
    let (mut at4, mut at6) = (n4 * index / threads, n6 * index / threads);
    while !stop.load(Ordering::Relaxed) {
        if n4 > 0 {
            let block = &trace.v4[at4..(at4 + BLOCK).min(n4)];
            at4 = (at4 + block.len()) % n4;
            if batch <= 1 {
                block.iter().for_each(|&a| sum ^= l.v4(a).unwrap_or(MISS));
            } else {
                for c in block.chunks(batch) {
                    l.v4_batch(c, &mut out[..c.len()]);
                    sum ^= out[0];
                }
            }
            done += block.len() as u64;
            counted.fetch_add(block.len() as u64, Ordering::Relaxed);
        }
        if n6 > 0 {
            let block = &trace.v6[at6..(at6 + BLOCK).min(n6)];
            at6 = (at6 + block.len()) % n6;
            if batch <= 1 {
                block.iter().for_each(|&a| sum ^= l.v6(a).unwrap_or(MISS));
            } else {
                for c in block.chunks(batch) {
                    l.v6_batch(c, &mut out[..c.len()]);
                    sum ^= out[0];
                }
            }
            done += block.len() as u64;
            counted.fetch_add(block.len() as u64, Ordering::Relaxed);
        }
        if n4 == 0 && n6 == 0 {
            break;
        }
    }
    black_box(sum);
    (done, start.elapsed().as_secs_f64())
}
