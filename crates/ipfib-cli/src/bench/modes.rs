//! What is timed: the lookup loops of each mode and path, and the threads that run them.
//!
//! * **throughput**: independent lookups, the address sequence is the trace. Single path: one
//!   `lookup` per address; batch path: one call per consecutive chunk of the trace (`--chunk`,
//!   4096 addresses by default: large enough that the per-call cost vanishes, small enough that
//!   answers stay in L1/L2) into an answer array allocated before timing. Which call depends
//!   on the engine ([`Engine`]): ours `lookup_batch_raw` into `u32`s, as `ipfib::Fib`'s batch
//!   lookups call it; a comparator with a native batch its own bulk lookup on the sequence
//!   converted to its layout before timing (DPDK: `rte_fib6_lookup_bulk` on 16-byte
//!   network-order keys into `u64`s, ..., in bursts of at most 32 addresses per call, as a DPDK
//!   application looks up a receive burst); other comparators `lookup_batch` into `Option`s.
//! * **latency** (DXR's SEQ): lookup `i` uses address `trace[i] ^ (answer[i-1] & 1)`, a miss
//!   counting as answer 0. The XOR is a data dependency on the previous answer, so the CPU
//!   cannot start a lookup before the previous one has finished; ns/lookup is then the latency
//!   of one lookup. Flipping the lowest address bit keeps the address inside the same prefix
//!   unless that prefix is a host route. Single path only (a batch of dependent lookups is a
//!   contradiction).
//! * **repeated** (DXR's REP): the trace's first `count / 8` addresses, in windows of 8
//!   distinct addresses each looked up 8 times round-robin (`a0..a7, a0..a7, ...`, 64 lookups
//!   per window), so each address recurs 8 times within 64 lookups, like packets of a few
//!   concurrent flows. Same number of lookups as throughput.
//!
//! With `--threads N` every thread runs the whole loop over the same shared, read-only engine
//! (a `&dyn Lookup`, which is `Sync`), thread `t` starting at offset `t * len / N` of the sequence
//! so that the threads do not walk the same addresses in lock step.

use std::hint::black_box;
use std::ops::Range;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use ipfib::{Address, Lookup, LookupError, NextHop};
use serde::Serialize;

use crate::bench::contenders::Engine;
use crate::bench::cpu;
use crate::bench::native::{Prepared, Runner};

/// The address families the bench runs on: latency mode needs to XOR one answer bit into the
/// next address, which the [`Address`] trait does not offer.
pub trait FlipLow: Address {
    /// The address with its lowest bit XORed with the lowest bit of `bit`.
    fn flip_low(self, bit: u32) -> Self;
}

impl FlipLow for u32 {
    #[inline(always)]
    fn flip_low(self, bit: u32) -> u32 {
        self ^ (bit & 1)
    }
}

impl FlipLow for u128 {
    #[inline(always)]
    fn flip_low(self, bit: u32) -> u128 {
        self ^ u128::from(bit & 1)
    }
}

/// The latency chain's next address: `addr ^ (prev & 1)`, a miss counting as 0.
#[inline(always)]
pub fn chain_next<A: FlipLow>(addr: A, prev: Option<NextHop>) -> A {
    addr.flip_low(prev.unwrap_or(0))
}

/// How lookups are issued relative to each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Independent lookups over the trace.
    Throughput,
    /// Each address depends on the previous answer (DXR's SEQ).
    Latency,
    /// Each address 8 times within a window of 64 lookups (DXR's REP).
    Repeated,
}

impl Mode {
    /// The name used on the command line and in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Throughput => "throughput",
            Mode::Latency => "latency",
            Mode::Repeated => "repeated",
        }
    }

    /// The paths this mode is measured on.
    pub fn paths(self) -> &'static [Path] {
        match self {
            Mode::Latency => &[Path::Single],
            Mode::Throughput | Mode::Repeated => &[Path::Single, Path::Batch],
        }
    }
}

/// Which entry point of the engine is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Path {
    /// `lookup`, one address per call.
    Single,
    /// `lookup_batch` over chunks.
    Batch,
}

impl Path {
    /// The name used in the report and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Path::Single => "single",
            Path::Batch => "batch",
        }
    }
}

/// How many times each address recurs in repeated mode, and how many distinct addresses share
/// a window.
pub const REPEAT: usize = 8;

/// The repeated-mode sequence for a trace, as long as the trace (see the module doc).
pub fn repeated<A: Copy>(trace: &[A]) -> Vec<A> {
    let distinct = trace.len().div_ceil(REPEAT);
    let mut out = Vec::with_capacity(distinct * REPEAT);
    for window in trace[..distinct].chunks(REPEAT) {
        for _ in 0..REPEAT {
            out.extend_from_slice(window);
        }
    }
    out.truncate(trace.len());
    out
}

/// One timed loop: which engine, over which addresses, how.
#[derive(Clone, Copy)]
pub struct Job<'a, A: Address> {
    /// The engine under test.
    pub engine: &'a Engine<A>,
    /// The address sequence of the mode (already transformed for repeated mode).
    pub addrs: &'a [A],
    /// `addrs` in the engine's native layout, for the native batch path.
    pub native: Option<&'a dyn Prepared>,
    /// The mode.
    pub mode: Mode,
    /// The path.
    pub path: Path,
    /// Addresses per batch call.
    pub chunk: usize,
}

/// One thread's answer array for the batch path, allocated before timing.
enum Answers<'a> {
    /// The single path and latency mode write none.
    None,
    /// `lookup_batch_raw` into `u32`s with a miss value.
    Raw(Vec<NextHop>, NextHop),
    /// `lookup_batch` into `Option`s.
    Options(Vec<Option<NextHop>>),
    /// A native runner with its own array.
    Native(Box<dyn Runner + 'a>),
}

impl<'a, A: FlipLow> Job<'a, A> {
    /// The answer array of one thread.
    fn answers(&self) -> Answers<'a> {
        let chunk = self.chunk.max(1);
        match (self.mode, self.path, self.engine, self.native) {
            (Mode::Latency, ..) | (_, Path::Single, ..) => Answers::None,
            (.., Engine::Ours { miss, .. }, _) => Answers::Raw(vec![0; chunk], *miss),
            (.., Engine::Native(_), Some(prepared)) => Answers::Native(prepared.runner(chunk)),
            _ => Answers::Options(vec![None; chunk]),
        }
    }

    /// Runs the loop once over the sequence rotated to start at `offset`; returns when it
    /// started and ended.
    fn run(&self, offset: usize, out: &mut Answers<'_>) -> anyhow::Result<(Instant, Instant)> {
        let engine = self.engine.lookup();
        let len = self.addrs.len();
        let offset = offset.min(len);
        let (head, tail) = self.addrs.split_at(offset);
        let start = Instant::now();
        match (self.mode, self.path) {
            (Mode::Latency, _) => {
                let prev = chain(engine, tail, None);
                black_box(chain(engine, head, prev));
            }
            (_, Path::Single) => {
                single(engine, tail);
                single(engine, head);
            }
            (_, Path::Batch) => {
                batch(engine, self.addrs, offset..len, out)?;
                batch(engine, self.addrs, 0..offset, out)?;
            }
        }
        Ok((start, Instant::now()))
    }
}

#[inline(never)]
fn single<A: Address>(engine: &dyn Lookup<A>, addrs: &[A]) {
    for &a in addrs {
        black_box(engine.lookup(a));
    }
}

/// The batch path over `range` of `addrs`, a chunk per call, into `out`.
#[inline(never)]
fn batch<A: Address>(
    engine: &dyn Lookup<A>,
    addrs: &[A],
    range: Range<usize>,
    out: &mut Answers<'_>,
) -> Result<(), LookupError> {
    match out {
        Answers::Native(runner) => runner.run(range)?,
        Answers::Raw(buf, miss) => {
            for part in addrs[range].chunks(buf.len()) {
                let o = &mut buf[..part.len()];
                engine.lookup_batch_raw(part, o, *miss)?;
                black_box(&*o);
            }
        }
        Answers::Options(buf) => {
            for part in addrs[range].chunks(buf.len()) {
                let o = &mut buf[..part.len()];
                engine.lookup_batch(part, o)?;
                black_box(&*o);
            }
        }
        Answers::None => {}
    }
    Ok(())
}

#[inline(never)]
fn chain<A: FlipLow>(
    engine: &dyn Lookup<A>,
    addrs: &[A],
    mut prev: Option<NextHop>,
) -> Option<NextHop> {
    for &a in addrs {
        prev = engine.lookup(chain_next(a, prev));
    }
    prev
}

/// The times of one run: wall clock from the first thread's start to the last thread's end,
/// and each thread's own loop time.
#[derive(Clone, Debug)]
pub struct RunTime {
    /// Start of the first to end of the last thread.
    pub wall: Duration,
    /// Each thread's loop time.
    pub per_thread: Vec<Duration>,
    /// The CPU each thread was on when its loop ended (`None` if the kernel did not say).
    pub cpus: Vec<Option<usize>>,
}

/// Where each benchmark thread runs: pinned to these CPUs in order, or unpinned when empty.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    /// CPU of thread `t` is `cpus[t]`.
    pub cpus: Vec<usize>,
}

impl Placement {
    /// Pins thread `t` of `threads` to the `t`-th allowed CPU when there are enough of them;
    /// a single thread stays where the user put it (`taskset`).
    pub fn for_threads(threads: usize) -> Self {
        let allowed = cpu::allowed();
        if threads > 1 && allowed.len() >= threads {
            Placement {
                cpus: allowed[..threads].to_vec(),
            }
        } else {
            Placement::default()
        }
    }
}

/// Runs a job once untimed (warm-up) and then `runs` times timed, on `threads` threads.
pub fn time_runs<A: FlipLow>(
    job: Job<'_, A>,
    threads: usize,
    runs: usize,
    placement: &Placement,
) -> anyhow::Result<Vec<RunTime>> {
    let threads = threads.max(1);
    if threads == 1 {
        let mut out = job.answers();
        job.run(0, &mut out)?;
        return (0..runs)
            .map(|_| {
                let (start, end) = job.run(0, &mut out)?;
                let t = end - start;
                Ok(RunTime {
                    wall: t,
                    per_thread: vec![t],
                    cpus: vec![cpu::current()],
                })
            })
            .collect();
    }
    let barrier = Barrier::new(threads);
    let len = job.addrs.len();
    type Span = (Instant, Instant, Option<usize>);
    let per_thread: Vec<Vec<Span>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let barrier = &barrier;
                let cpu = placement.cpus.get(t).copied();
                s.spawn(move || -> anyhow::Result<Vec<Span>> {
                    if let Some(c) = cpu {
                        cpu::pin_current(c);
                    }
                    let mut out = job.answers();
                    let offset = t * len / threads;
                    let mut times = Vec::with_capacity(runs);
                    let mut failed = None;
                    for r in 0..=runs {
                        // Every run starts together; a failed loop still takes part in every
                        // barrier, so the other threads are not left waiting.
                        barrier.wait();
                        if failed.is_none() {
                            match job.run(offset, &mut out) {
                                Ok((a, b)) if r > 0 => times.push((a, b, cpu::current())),
                                Ok(_) => {}
                                Err(e) => failed = Some(e),
                            }
                        }
                    }
                    failed.map_or(Ok(times), Err)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .map_err(|_| anyhow::anyhow!("a benchmark thread panicked"))?
            })
            .collect::<anyhow::Result<_>>()
    })?;
    Ok((0..runs)
        .map(|r| {
            let spans: Vec<Span> = per_thread.iter().map(|t| t[r]).collect();
            let first = spans.iter().map(|s| s.0).min().expect("threads >= 2");
            let last = spans.iter().map(|s| s.1).max().expect("threads >= 2");
            RunTime {
                wall: last - first,
                per_thread: spans.iter().map(|(a, b, _)| *b - *a).collect(),
                cpus: spans.iter().map(|s| s.2).collect(),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipfib::{engine, BuildOptions, RouteTable};

    #[test]
    fn repeated_keeps_length_and_recurs_each_address_in_its_window() {
        let trace: Vec<u32> = (100..164).collect();
        let rep = repeated(&trace);
        assert_eq!(rep.len(), 64);
        // 64 / 8 = 8 distinct addresses: the first 8 of the trace, each exactly 8 times.
        assert_eq!(&rep[..8], &trace[..8]);
        assert_eq!(&rep[8..16], &trace[..8]);
        for a in &trace[..8] {
            assert_eq!(rep.iter().filter(|x| *x == a).count(), 8);
        }
        assert!(!rep.contains(&trace[8]));
    }

    #[test]
    fn repeated_of_short_and_uneven_traces() {
        assert!(repeated::<u32>(&[]).is_empty());
        assert_eq!(repeated(&[5u32]), vec![5]);
        let rep = repeated(&(0..20u32).collect::<Vec<_>>());
        // ceil(20 / 8) = 3 distinct addresses, one window of 3, repeated, cut to 20.
        assert_eq!(rep.len(), 20);
        assert_eq!(&rep[..6], &[0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn chain_flips_only_on_odd_answers() {
        assert_eq!(chain_next(10u32, None), 10);
        assert_eq!(chain_next(10u32, Some(4)), 10);
        assert_eq!(chain_next(10u32, Some(7)), 11);
        assert_eq!(chain_next(11u128, Some(1)), 10);
    }

    fn engine() -> Engine<u32> {
        let mut t = RouteTable::new();
        t.insert_net("10.0.0.0/8".parse().unwrap(), 1).unwrap();
        Engine::Ours {
            engine: engine::by_name("planb")
                .unwrap()
                .build(&t, &BuildOptions::default())
                .unwrap(),
            miss: u32::MAX,
        }
    }

    #[test]
    fn runs_are_timed_per_thread_and_counted() {
        let e = engine();
        let addrs: Vec<u32> = (0..10_000u32).map(|i| 0x0a00_0000 + i * 7).collect();
        for (mode, path) in [
            (Mode::Throughput, Path::Single),
            (Mode::Throughput, Path::Batch),
            (Mode::Latency, Path::Single),
        ] {
            let job = Job {
                engine: &e,
                addrs: &addrs,
                native: None,
                mode,
                path,
                chunk: 64,
            };
            let one = time_runs(job, 1, 3, &Placement::default()).unwrap();
            assert_eq!(one.len(), 3);
            assert!(one
                .iter()
                .all(|r| r.per_thread.len() == 1 && r.wall > Duration::ZERO));
            let two = time_runs(job, 2, 2, &Placement::for_threads(2)).unwrap();
            assert_eq!(two.len(), 2);
            for r in &two {
                assert_eq!(r.per_thread.len(), 2);
                assert!(r.per_thread.iter().all(|t| *t <= r.wall), "{r:?}");
            }
        }
    }
}
