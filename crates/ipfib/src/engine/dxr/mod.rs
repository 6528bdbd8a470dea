//! DXR (Zec, Rizzo & Mikuc, CCR 2012) for IPv4: a direct table on the top `K` bits, then a
//! search over the sorted address ranges of the chunk, in the paper's compact encodings.
//!
//! The address space is cut into `2^K` chunks. A chunk that no route splits is *resolved*: its
//! direct entry is the next-hop index and a lookup ends after one load. Any other chunk is an
//! array of ranges (elementary intervals cut at the chunk's edges), 16-bit starts with 16-bit
//! next-hop indices, or 8 + 8 bits where the chunk allows, or 16 + 32 bits for tables with more
//! next hops than 16 bits index (`format`). The answer is the range
//! with the last start `<=` the address's low bits: a SIMD compare over one 64-byte window of
//! starts (after a short binary search for chunks of more than 32 long / 64 short ranges),
//! then the next-hop table (`walk`). A batch runs as a software pipeline of lanes that all do
//! the same work, or, for blocks that mostly end in the direct table, as prefetched single
//! lookups that stop there.
//!
//! Presets: [`D16R`] (`K = 16`, the compact one: 256 KiB direct table) and [`D20R`] (`K = 20`,
//! 4 MiB direct table, short chunks), registered as `d16r` and `d20r`; `dxr` ([`Best`]) is
//! D16R, which measured as fast as D20R on the real tables at a quarter of the memory (2.3
//! against 8.9 bytes per prefix on et-2015; BENCHMARKS.md, "DXR and Patricia").
//!
//! IPv6 is not built: the registry pairs DXR with [`super::Absent`], so an IPv6 route is
//! [`BuildError::UnsupportedFamily`]. DXR's 16-bit starts need a direct table that resolves
//! all but 16 bits; for IPv6 the dense /16 chunks hold up to 18 K ranges, and the measured
//! IPv6 variant (`examples/dxr6_probe.rs`: PlanB's direct table, then a batched binary search
//! of each chunk's 32-bit starts) ran at 0.07x PlanB (BENCHMARKS.md, "IPv6 DXR").
//!
//! Exactness: ranges come from the exact interval partition ([`crate::interval`]); next-hop
//! index 0 is "no route" and every route's next hop gets its own index, so every `u32` next hop
//! is a valid value. A table beyond the encoding (over 2^30 - 1 distinct next hops or 4 GiB of
//! ranges: not a table that fits in memory) is refused with [`BuildError::Unsupported`],
//! never approximated.
//!
//! Modules: `format` (entries and chunks, written and read in one place), `builder`, `search`
//! (window search per SIMD backend), `walk` (single and batched lookups).

mod builder;
mod format;
mod search;
mod walk;

use std::marker::PhantomData;

use crate::cpu::Cpu;
use crate::engine::{check_batch, Backend, Build, BuildOptions, Detail, Lookup};
use crate::error::{BuildError, InvalidStructure, LookupError};
use crate::route_table::{NextHop, RouteTable};
use builder::{Limits, Stats};
use format::Entry;
use walk::Walk;

/// A DXR configuration: the direct table's width and the registered name.
pub trait Preset: Clone + Copy + std::fmt::Debug + Send + Sync + 'static {
    /// Bits resolved by the direct table (16..=22).
    const K: u32;
    /// The registered engine name.
    const NAME: &'static str;
}

/// D16R: a 2^16-entry direct table (256 KiB), the most compact configuration.
#[derive(Clone, Copy, Debug)]
pub struct D16R;

impl Preset for D16R {
    const K: u32 = 16;
    const NAME: &'static str = "d16r";
}

/// D20R: a 2^20-entry direct table (4 MiB); most chunks are resolved or short.
#[derive(Clone, Copy, Debug)]
pub struct D20R;

impl Preset for D20R {
    const K: u32 = 20;
    const NAME: &'static str = "d20r";
}

/// The preset registered as `dxr`: D16R (as fast as D20R on the real tables measured, a
/// quarter of its memory; BENCHMARKS.md).
#[derive(Clone, Copy, Debug)]
pub struct Best;

impl Preset for Best {
    const K: u32 = 16;
    const NAME: &'static str = "dxr";
}

/// Addresses per block of a batch; each block picks its walk from its first [`SAMPLE`].
const BLOCK: usize = 4096;

/// Addresses at the start of a block whose direct entries pick its walk.
const SAMPLE: usize = 64;

/// Which walk a block of a batch takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BatchWalk {
    /// The software pipeline (`walk::batch`): every lane the same instructions; forced by
    /// the tests.
    #[cfg_attr(not(test), allow(dead_code))]
    Pipeline,
    /// Prefetched single lookups that stop at a resolved entry (`walk::stream`); forced by
    /// the tests.
    #[cfg_attr(not(test), allow(dead_code))]
    Stream,
    /// Per block: the stream when at most half of the sampled addresses need a range
    /// search, else the pipeline. Measured on et-2015 and bart-tier1 (BENCHMARKS.md): on
    /// uniform traces (about a quarter searched) the stream is 1.5-2.2x the pipeline; on
    /// matched traces (86 % searched) the two are within 5 %.
    Adaptive,
}

/// The DXR lookup structure for IPv4 with preset `P`.
///
/// Every value satisfies the invariants [`Lookup::validate`] checks (only the builder makes
/// one), which is what lets the SIMD walks skip bounds checks.
///
/// ```
/// use ipfib::engine::dxr::{Dxr, D16R};
/// use ipfib::engine::{Build, BuildOptions, Lookup};
/// use ipfib::{Prefix, RouteTable};
///
/// let routes: RouteTable<u32> = [
///     (Prefix::new(0x0a00_0000, 8).unwrap(), 1),
///     (Prefix::new(0x0a01_0200, 24).unwrap(), 2),
/// ]
/// .into_iter()
/// .collect();
/// let dxr = Dxr::<D16R>::build(&routes, &BuildOptions::default()).unwrap();
/// assert_eq!(dxr.lookup(0x0a01_0203), Some(2));
/// assert_eq!(dxr.lookup(0x0a01_0303), Some(1));
/// assert_eq!(dxr.lookup(0x0b00_0000), None);
/// ```
#[derive(Clone, Debug)]
pub struct Dxr<P: Preset> {
    /// One [`Entry`] per chunk.
    direct: Box<[u32]>,
    /// The chunks' range arrays, then [`format::TAIL`] bytes of padding.
    ranges: Box<[u8]>,
    /// Next hop of each index; index 0 ("no route") holds a placeholder.
    hops: Box<[NextHop]>,
    /// Next-hop indices are 32-bit (every chunk [`format::Form::Wide`]).
    wide: bool,
    /// Halving steps every lookup takes after the fence search: enough to bring the longest
    /// chunk's blocks to a window (0 unless a chunk has over 1,024 ranges).
    steps: u32,
    stats: Stats,
    /// The backend the walks run with, and its token.
    cpu: Cpu,
    batch_walk: BatchWalk,
    preset: PhantomData<P>,
}

impl<P: Preset> Dxr<P> {
    fn with_limits(
        table: &RouteTable<u32>,
        options: &BuildOptions,
        limits: Limits,
    ) -> Result<Self, BuildError> {
        const { assert!(P::K >= 16 && P::K <= 22, "16-bit starts need K >= 16") };
        let backend = options.resolve_backend()?;
        let parts = builder::build(table, P::K, P::NAME, limits)?;
        let dxr = Dxr {
            direct: parts.direct.into_boxed_slice(),
            ranges: parts.ranges.into_boxed_slice(),
            hops: parts.hops.into_boxed_slice(),
            wide: parts.wide,
            steps: parts.stats.max_extra,
            stats: parts.stats,
            cpu: Cpu::new(backend).ok_or(BuildError::BackendUnavailable {
                backend: backend.name(),
            })?,
            batch_walk: BatchWalk::Adaptive,
            preset: PhantomData,
        };
        // The walks' unchecked reads rest on these invariants; debug builds (the test
        // profile) check that the builder established them.
        #[cfg(debug_assertions)]
        if let Err(e) = dxr.check() {
            panic!("the DXR builder made an invalid structure: {e}");
        }
        Ok(dxr)
    }

    /// The window-search backend in use.
    pub fn backend(&self) -> Backend {
        self.cpu.backend()
    }

    fn check(&self) -> Result<(), String> {
        if self.direct.len() != 1 << P::K {
            return Err(format!(
                "{} direct entries, not 2^{}",
                self.direct.len(),
                P::K
            ));
        }
        if self.hops.is_empty() || self.hops.len() > format::MAX_FIELD + 1 {
            return Err(format!("{} next-hop slots", self.hops.len()));
        }
        if self.ranges.len() < format::TAIL || self.ranges[..16] != format::DUMMY {
            return Err("range array without its dummy chunk or tail".into());
        }
        if !self.wide && self.hops.len() > 1 << 16 {
            return Err("16-bit indices for over 65,536 next-hop slots".into());
        }
        let mut seen = std::collections::HashSet::new();
        // A chunk with its predecessor's entry was checked with it (runs of equal entries
        // are most of a direct table).
        let mut previous = None;
        for (c, &e) in self.direct.iter().enumerate() {
            if previous.replace(e) == Some(e) {
                continue;
            }
            let e = Entry(e);
            if e.is_resolved() {
                if e.hop() as usize >= self.hops.len() {
                    return Err(format!("chunk {c}: next-hop index past the table"));
                }
            } else if seen.insert(e) {
                let bits = (32 - P::K, 24 - P::K);
                format::check_chunk(&self.ranges, e, self.wide, bits, self.hops.len())
                    .map_err(|m| format!("chunk {c}: {m}"))?;
                let extra = format::Chunk::of(&self.ranges, e, self.wide).map_or(0, |c| c.extra);
                if extra > self.steps {
                    return Err(format!("chunk {c}: {extra} halvings, over {}", self.steps));
                }
            }
        }
        Ok(())
    }

    /// The batched walk for the backend in use, into any output kind.
    fn batch_into<O: walk::Output>(&self, addrs: &[u32], out: &mut [O], miss: NextHop) {
        for (addrs, out) in addrs.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
            if self.streams(addrs) {
                self.stream_into(addrs, out, miss);
            } else {
                self.pipeline_into(addrs, out, miss);
            }
        }
    }

    /// Whether a block of `addrs` takes the stream walk (see [`BatchWalk`]).
    fn streams(&self, addrs: &[u32]) -> bool {
        match self.batch_walk {
            BatchWalk::Pipeline => false,
            BatchWalk::Stream => true,
            BatchWalk::Adaptive => {
                let sample = &addrs[..addrs.len().min(SAMPLE)];
                let searched = sample
                    .iter()
                    .filter(|&&a| !Entry(self.direct[(a >> (32 - P::K)) as usize]).is_resolved())
                    .count();
                searched * 2 <= sample.len()
            }
        }
    }

    /// The stream walk for the backend in use. A function of its own per backend, like
    /// [`Dxr::pipeline_into`]: with both walks inlined into one `target_feature` function the
    /// stream ran ~10 % slower (bart-tier1 uniform, 211–215 against 237 M/s).
    fn stream_into<O: walk::Output>(&self, addrs: &[u32], out: &mut [O], miss: NextHop) {
        // SAFETY: the token proves the CPU has the features its walk enables, and `self`
        // satisfies the structure invariants (every `Dxr` does).
        crate::cpu::with_token!(self.cpu, s => unsafe { s.stream(self, addrs, out, miss) })
    }

    /// The pipeline walk for the backend in use.
    fn pipeline_into<O: walk::Output>(&self, addrs: &[u32], out: &mut [O], miss: NextHop) {
        // SAFETY: as for the stream.
        crate::cpu::with_token!(self.cpu, s => unsafe { s.batch(self, addrs, out, miss) })
    }

    /// Distinct lines of the direct table, range array and next-hop table one lookup of
    /// `addr` reads (the model behind [`Lookup::lines_per_lookup`]).
    fn lines_of(&self, addr: u32) -> usize {
        let chunk = (addr >> (32 - P::K)) as usize;
        let line = |p: *const u8| p as usize / 64;
        let mut lines = vec![line(self.direct[chunk..].as_ptr().cast())];
        let e = Entry(self.direct[chunk]);
        let chunk = format::Chunk::of(&self.ranges, e, self.wide).filter(|_| !e.is_resolved());
        let hop = match chunk {
            None => e.hop(),
            Some(c) => {
                let byte = |i: usize| line(self.ranges[i..].as_ptr());
                let shift = 24 - P::K;
                let start = |i: usize| c.start(i, shift).expect("valid");
                let x = addr & ((1 << (32 - P::K)) - 1);
                lines.push(byte(c.fences_at - 4));
                lines.push(byte(c.fences_at + 2 * c.fences - 1));
                let fenced = (0..c.fences)
                    .filter(|&j| c.fence(j).expect("valid") <= x)
                    .count();
                let mut lo = (fenced - 1) * (format::WINDOW << c.extra);
                let mut len = (c.n - lo).min(format::WINDOW << c.extra);
                for _ in 0..self.steps {
                    let half = len / 2;
                    lines.push(byte(c.start_at(lo + half)));
                    if start(lo + half) <= x {
                        lo += half;
                    }
                    len -= half;
                }
                lines.push(byte(c.start_at(lo)));
                lines.push(byte(c.start_at(lo + len) - 1));
                let rank = lo + (lo..lo + len).filter(|&i| start(i) <= x).count();
                lines.push(byte(c.index_at(rank - 1)));
                c.index(rank - 1).expect("valid")
            }
        };
        lines.push(line(self.hops[hop as usize..].as_ptr().cast()));
        lines.sort_unstable();
        lines.dedup();
        lines.len()
    }
}

impl<P: Preset> Build<u32> for Dxr<P> {
    fn build(table: &RouteTable<u32>, options: &BuildOptions) -> Result<Self, BuildError> {
        Self::with_limits(table, options, Limits::default())
    }
}

impl<P: Preset> Lookup<u32> for Dxr<P> {
    fn name(&self) -> &'static str {
        P::NAME
    }

    fn lookup(&self, addr: u32) -> Option<NextHop> {
        // SAFETY: the token proves the CPU has the features its walk enables, and `self`
        // satisfies the structure invariants (every `Dxr` does).
        crate::cpu::with_token!(self.cpu, s => unsafe { s.one(self, addr) })
    }

    fn lookup_batch(&self, addrs: &[u32], out: &mut [Option<NextHop>]) -> Result<(), LookupError> {
        check_batch(addrs.len(), out.len())?;
        self.batch_into(addrs, out, 0);
        Ok(())
    }

    fn lookup_batch_raw(
        &self,
        addrs: &[u32],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        check_batch(addrs.len(), out.len())?;
        self.batch_into(addrs, out, miss);
        Ok(())
    }

    fn memory_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.direct)
            + std::mem::size_of_val(&*self.ranges)
            + std::mem::size_of_val(&*self.hops)
    }

    fn describe(&self) -> Vec<Detail> {
        let s = &self.stats;
        vec![
            Detail::count("direct_bits", P::K as usize),
            Detail::text("window_search", self.backend().name()),
            Detail::text(
                "batch_walk",
                match self.batch_walk {
                    BatchWalk::Pipeline => "pipeline",
                    BatchWalk::Stream => "prefetched singles",
                    BatchWalk::Adaptive => "prefetched singles or pipeline, per 4,096 addresses",
                },
            ),
            Detail::count("intervals", s.intervals),
            Detail::count("next_hops", self.hops.len() - 1),
            Detail::count("resolved_chunks", s.resolved_chunks),
            Detail::count("short_chunks", s.short_chunks),
            Detail::count("long_chunks", s.long_chunks),
            Detail::count("wide_chunks", s.wide_chunks),
            Detail::count("stored_chunks", s.stored_chunks),
            Detail::count("short_ranges", s.short_ranges),
            Detail::count("long_ranges", s.long_ranges),
            Detail::count("wide_ranges", s.wide_ranges),
            Detail::count("longest_chunk", s.max_ranges),
            Detail::count("halving_steps", self.steps as usize),
            Detail::bytes("direct_bytes", std::mem::size_of_val(&*self.direct)),
            Detail::bytes("range_bytes", self.ranges.len()),
            Detail::bytes("next_hop_bytes", std::mem::size_of_val(&*self.hops)),
        ]
    }

    fn lines_per_lookup(&self, addrs: &[u32]) -> Option<f64> {
        crate::engine::line_model::mean(addrs, |a| self.lines_of(a))
    }

    fn validate(&self) -> Result<(), InvalidStructure> {
        self.check().map_err(|reason| InvalidStructure {
            engine: P::NAME,
            reason,
        })
    }
}

#[cfg(test)]
mod tests;
