//! The DXR lookup, single and batched, written once for every SIMD backend.
//!
//! A lookup reads the direct entry of its chunk; a resolved entry is the next-hop index. Else
//! the chunk's fences (one SIMD compare) name a block of starts, which for chunks of over
//! 1,024 ranges a branch-free binary search narrows to one 64-byte window; the window is
//! searched in one SIMD compare, and the rank picks the next-hop index (`format` has the
//! layout); index 0 is "no route", every other index is a real next hop, so no next-hop value
//! is reserved.
//!
//! The batched walk runs groups of [`LANES`] lookups through a software pipeline: a group's
//! direct entries are prefetched; one round later read (and each chunk's first line, its
//! header and fences, prefetched); two rounds later its fences searched (and the block's
//! window of starts and its indices prefetched); two rounds later its windows searched. Each
//! miss then has rounds of other lookups' work to arrive behind, instead of stalling its own
//! lookup. Measured (BENCHMARKS.md), the batch gains only about 1.2x over single lookups:
//! the walk is bound by its instructions (two dependent SIMD searches and the selects that
//! keep lanes uniform), not by misses.
//!
//! A block of a batch that mostly ends in the direct table (uniform traces: about three
//! lookups in four) takes [`stream`] instead: prefetched single lookups that stop at a resolved
//! entry, where the pipeline would search the dummy chunk for those lanes too (`BatchWalk` in
//! the parent module picks per block).
//!
//! Every function here is `unsafe`: the SIMD tokens read without bounds checks, which is sound
//! only on a structure that satisfies the invariants `Dxr::validate` checks (every `Dxr` does).

use std::hint::select_unpredictable;

use super::format::{Entry, COUNT_MASK, FENCE_MASK, WINDOW};
use super::search::{Scalar, Search};
use super::{Dxr, Preset};
use crate::route_table::NextHop;

/// What a batch writes per address: an `Option` or a plain next hop with the caller's miss.
pub trait Output: Copy {
    /// The output for next hop `hop` of index `index` (0 = no route, `hop` then meaningless).
    fn from_hop(hop: NextHop, index: u32, miss: NextHop) -> Self;
}

impl Output for Option<NextHop> {
    #[inline(always)]
    fn from_hop(hop: NextHop, index: u32, _miss: NextHop) -> Self {
        (index != 0).then_some(hop)
    }
}

impl Output for NextHop {
    #[inline(always)]
    fn from_hop(hop: NextHop, index: u32, miss: NextHop) -> Self {
        if index != 0 {
            hop
        } else {
            miss
        }
    }
}

/// Lookups per group of the batched walk.
pub const LANES: usize = 32;

/// Rounds from a group's direct entries being read (and its chunk heads prefetched) to its
/// fence search, and from that (and the block prefetches) to its window search.
const HEAD_DISTANCE: usize = 2;
const BLOCK_DISTANCE: usize = 2;
/// Rounds a group spends in the pipeline: entering, then the two distances.
const STAGES: usize = 1 + HEAD_DISTANCE + BLOCK_DISTANCE;
/// Groups in the pipeline at once (a power of two at least `STAGES`, for the slot index).
const IN_FLIGHT: usize = STAGES.next_power_of_two();

/// Where a lane's window search happens, once its fences are searched.
#[derive(Clone, Copy, Debug, Default)]
struct Block {
    /// Byte offset of the chunk's first start.
    at: u32,
    /// The chunk's range count.
    n: u32,
    /// The block's first start and its length.
    lo: u32,
    len: u32,
}

/// Stage 1 of a range search: the fences of `addr`'s chunk (entry `e`; a resolved entry
/// searches the dummy chunk) name its block of starts.
///
/// # Safety
/// `e` is an entry of a structure (range array `ranges`) that satisfies the invariants.
#[inline(always)]
unsafe fn fence<P: Preset, S: Search>(s: S, ranges: &[u8], e: Entry, addr: u32) -> Block {
    let low = addr & ((1 << (32 - P::K)) - 1);
    let off = e.offset();
    // SAFETY: a valid chunk's header and a 64-byte window from its fences lie inside
    // `ranges`; its first fence is 0, so the count is at least 1.
    unsafe {
        let header = u32::from_le_bytes(s.read::<4>(ranges, off));
        let n = header & COUNT_MASK;
        let fences = header >> 20 & FENCE_MASK;
        let stride = header >> 26;
        let f = s.count(
            s.window(ranges, off + 4),
            fences as usize,
            true,
            low as u16,
            0,
        ) as u32;
        let lo = (f - 1) << stride;
        Block {
            at: off as u32 + 4 + 2 * fences,
            n,
            lo,
            len: select_unpredictable(n - lo < 1 << stride, n - lo, 1 << stride),
        }
    }
}

/// Hints the lines stage 2 reads for block `b`: its window of starts and its indices.
#[inline(always)]
fn prefetch_block<S: Search, const WIDE: bool>(s: S, ranges: &[u8], e: Entry, b: Block) {
    let ws = 1 + usize::from(WIDE || e.long());
    let wi = if WIDE { 4 } else { ws };
    let base = ranges.as_ptr();
    let window = b.at as usize + ws * b.lo as usize;
    let index = b.at as usize + ws * b.n as usize + wi * b.lo as usize;
    s.prefetch(base.wrapping_add(window));
    s.prefetch(base.wrapping_add(index));
}

/// Stage 2: the next-hop index of `addr` from its block `b`, in a table that is `WIDE`
/// (32-bit indices) or not, whose blocks need `steps` halvings to fit a window.
///
/// Every lane runs the same instructions: a resolved entry searched the dummy chunk and its
/// own answer is selected at the end; the start width is a select; every lane takes `steps`
/// halvings (a step on a block that already fits only shrinks it, which keeps the search
/// exact). Per-lane branches cost a misprediction each on a mixed batch.
///
/// # Safety
/// `e` is an entry of a structure (range array `ranges`) that satisfies the invariants, `b`
/// is [`fence`]'s block for it, `WIDE` and `steps` are the table's.
#[inline(always)]
unsafe fn finish<P: Preset, S: Search, const WIDE: bool>(
    s: S,
    ranges: &[u8],
    steps: u32,
    e: Entry,
    b: Block,
    addr: u32,
) -> u32 {
    let long = WIDE || e.long();
    // Start width as a shift (0 = bytes, 1 = u16s): shifts, not multiplies.
    let ws = usize::from(long);
    let low = addr & ((1 << (32 - P::K)) - 1);
    let (x16, x8) = (low as u16, (low >> (24 - P::K)) as u8);
    let (at, n) = (b.at as usize, b.n as usize);
    // SAFETY: a valid chunk's starts, indices and every 64-byte window from one of its starts
    // lie inside `ranges` (its tail padding); the block's first start is `<=` the address,
    // so every rank is at least 1; `steps` halvings leave at most `WINDOW` starts.
    unsafe {
        let (mut lo, mut len) = (b.lo as usize, b.len as usize);
        for _ in 0..steps {
            let half = len / 2;
            let raw = u16::from_le_bytes(s.read::<2>(ranges, at + ((lo + half) << ws)));
            let le = select_unpredictable(long, raw <= x16, raw as u8 <= x8);
            lo += select_unpredictable(le, half, 0);
            len -= half;
        }
        debug_assert!(len <= WINDOW);
        let rank = lo + s.count(s.window(ranges, at + (lo << ws)), len, long, x16, x8);
        let idx = if WIDE {
            u32::from_le_bytes(s.read::<4>(ranges, at + 2 * n + 4 * (rank - 1)))
        } else {
            let raw = u16::from_le_bytes(s.read::<2>(ranges, at + ((n + rank - 1) << ws)));
            u32::from(select_unpredictable(long, raw, raw & 0xff))
        };
        select_unpredictable(e.is_resolved(), e.hop(), idx)
    }
}

/// Both stages for one lane.
///
/// # Safety
/// As for [`finish`].
#[inline(always)]
unsafe fn index<P: Preset, S: Search, const WIDE: bool>(
    s: S,
    ranges: &[u8],
    steps: u32,
    e: Entry,
    addr: u32,
) -> u32 {
    // SAFETY: caller's contract.
    unsafe {
        let b = fence::<P, S>(s, ranges, e, addr);
        finish::<P, S, WIDE>(s, ranges, steps, e, b, addr)
    }
}

/// One lookup.
///
/// # Safety
/// `t` satisfies the structure invariants.
#[inline(always)]
pub unsafe fn one<P: Preset, S: Search, O: Output>(
    t: &Dxr<P>,
    s: S,
    addr: u32,
    miss: NextHop,
) -> O {
    // SAFETY: a chunk number is below 2^K = `direct.len()` (structure invariants).
    unsafe {
        let e = Entry(s.at(&t.direct, (addr >> (32 - P::K)) as usize));
        answer(t, s, e, addr, miss)
    }
}

/// The answer for `addr`, whose direct entry is `e`, from both stages (a resolved entry
/// searches the dummy chunk and selects its own answer at the end, with no branch).
///
/// # Safety
/// `t` satisfies the structure invariants and `e` is `addr`'s direct entry.
#[inline(always)]
unsafe fn answer<P: Preset, S: Search, O: Output>(
    t: &Dxr<P>,
    s: S,
    e: Entry,
    addr: u32,
    miss: NextHop,
) -> O {
    // SAFETY: indices are below `hops.len()`; `wide` and `steps` are the table's (caller's
    // contract).
    unsafe {
        let i = if t.wide {
            index::<P, S, true>(s, &t.ranges, t.steps, e, addr)
        } else {
            index::<P, S, false>(s, &t.ranges, t.steps, e, addr)
        };
        O::from_hop(s.at(&t.hops, i as usize), i, miss)
    }
}

/// [`one`] kept out of line, for the portable search: inlined into the dispatching
/// `Lookup::lookup`, its register saves made every backend's call pay for them (see PlanB's
/// `walk::one_portable`).
///
/// # Safety
/// As for [`one`].
#[inline(never)]
pub unsafe fn one_portable<P: Preset, S: Search>(t: &Dxr<P>, s: S, addr: u32) -> Option<NextHop> {
    // SAFETY: caller's contract.
    unsafe { one(t, s, addr, 0) }
}

/// A batch: `out[i]` gets the answer for `addrs[i]` (the shorter slice bounds the work).
///
/// # Safety
/// `t` satisfies the structure invariants.
#[inline(always)]
pub unsafe fn batch<P: Preset, S: Search, O: Output>(
    t: &Dxr<P>,
    s: S,
    addrs: &[u32],
    out: &mut [O],
    miss: NextHop,
) {
    // SAFETY: `wide` is the table's (caller's contract for the rest).
    unsafe {
        if t.wide {
            batch_of::<P, S, O, true>(t, s, addrs, out, miss)
        } else {
            batch_of::<P, S, O, false>(t, s, addrs, out, miss)
        }
    }
}

/// [`batch`] for a table that is `WIDE` or not.
///
/// # Safety
/// `t` satisfies the structure invariants and `WIDE == t.wide`.
#[inline(always)]
unsafe fn batch_of<P: Preset, S: Search, O: Output, const WIDE: bool>(
    t: &Dxr<P>,
    s: S,
    addrs: &[u32],
    out: &mut [O],
    miss: NextHop,
) {
    let (direct, ranges, hops) = (&*t.direct, &*t.ranges, &*t.hops);
    let chunk = |a: u32| (a >> (32 - P::K)) as usize;
    let groups = addrs.len().min(out.len()) / LANES;
    let lanes = |g: usize| g * LANES..(g + 1) * LANES;
    let mut entries = [[Entry(0); LANES]; IN_FLIGHT];
    let mut blocks = [[Block::default(); LANES]; IN_FLIGHT];
    // Round r: group r's direct entries are prefetched, group r - 1's read (and its chunks'
    // first lines prefetched), group r - 1 - HEAD_DISTANCE's fences searched (and its
    // windows prefetched), group r - STAGES's windows searched. Distances 2 and 2 measured
    // best on et-2015 (1/1: 0.44x PlanB's batch rate, 2/2: 0.53x, 3/3: 0.50x, same runs).
    for round in 0..groups + STAGES {
        if round < groups {
            for &a in &addrs[lanes(round)] {
                s.prefetch(direct.as_ptr().wrapping_add(chunk(a)));
            }
        }
        if let Some(g) = round.checked_sub(1).filter(|&g| g < groups) {
            for (e, &a) in entries[g % IN_FLIGHT].iter_mut().zip(&addrs[lanes(g)]) {
                // SAFETY: a chunk number is below `direct.len()` (invariants).
                *e = Entry(unsafe { s.at(direct, chunk(a)) });
                let head = ranges.as_ptr().wrapping_add(e.offset());
                s.prefetch(head);
            }
        }
        if let Some(g) = round.checked_sub(1 + HEAD_DISTANCE).filter(|&g| g < groups) {
            let slot = g % IN_FLIGHT;
            for ((b, e), &a) in blocks[slot]
                .iter_mut()
                .zip(&entries[slot])
                .zip(&addrs[lanes(g)])
            {
                // SAFETY: `e` is a direct entry of `t` (invariants).
                *b = unsafe { fence::<P, S>(s, ranges, *e, a) };
                prefetch_block::<S, WIDE>(s, ranges, *e, *b);
            }
        }
        if let Some(g) = round.checked_sub(STAGES).filter(|&g| g < groups) {
            let slot = g % IN_FLIGHT;
            for (((b, e), &a), o) in blocks[slot]
                .iter()
                .zip(&entries[slot])
                .zip(&addrs[lanes(g)])
                .zip(&mut out[lanes(g)])
            {
                // SAFETY: `b` is `fence`'s block for `e`, a direct entry of `t`; `WIDE` and
                // `steps` are the table's (invariants for the rest).
                unsafe {
                    let i = finish::<P, S, WIDE>(s, ranges, t.steps, *e, *b, a);
                    *o = O::from_hop(s.at(hops, i as usize), i, miss);
                }
            }
        }
    }
    let rest = groups * LANES;
    for (&a, o) in addrs[rest..].iter().zip(&mut out[rest..]) {
        // SAFETY: caller's contract.
        *o = unsafe { one(t, s, a, miss) };
    }
}

/// How far ahead [`stream`] prefetches direct entries.
const AHEAD: usize = 16;

/// A batch as a stream of single lookups, each address's direct entry prefetched [`AHEAD`]
/// addresses early, and a resolved entry answered at once: a branch, which predicts when most
/// entries are resolved. For blocks that mostly end in the direct table, where the uniform
/// pipeline of [`batch`] would search the dummy chunk for every such lane. (Reading entries
/// ahead too and prefetching their chunks' first lines measured no faster on matched traces
/// and 5-12 % slower on uniform ones: BENCHMARKS.md.)
///
/// # Safety
/// `t` satisfies the structure invariants.
#[inline(always)]
pub unsafe fn stream<P: Preset, S: Search, O: Output>(
    t: &Dxr<P>,
    s: S,
    addrs: &[u32],
    out: &mut [O],
    miss: NextHop,
) {
    let (direct, hops) = (&*t.direct, &*t.hops);
    let chunk = |a: u32| (a >> (32 - P::K)) as usize;
    for (i, (&a, o)) in addrs.iter().zip(out.iter_mut()).enumerate() {
        if let Some(&ahead) = addrs.get(i + AHEAD) {
            s.prefetch(direct.as_ptr().wrapping_add(chunk(ahead)));
        }
        // SAFETY: a chunk number is below `direct.len()`, a resolved entry's index below
        // `hops.len()` (structure invariants).
        unsafe {
            let e = Entry(s.at(direct, chunk(a)));
            *o = if e.is_resolved() {
                O::from_hop(s.at(hops, e.hop() as usize), e.hop(), miss)
            } else {
                answer(t, s, e, a, miss)
            };
        }
    }
}

/// A backend's walks, single, pipelined and streamed, compiled with its instruction set: what
/// [`crate::cpu::with_token!`] calls for the table's backend.
pub trait Walk: Search {
    /// The pipelined walk of `addrs` into `out` ([`batch`]).
    ///
    /// # Safety
    /// `t` satisfies the structure invariants.
    unsafe fn batch<P: Preset, O: Output>(
        self,
        t: &Dxr<P>,
        addrs: &[u32],
        out: &mut [O],
        miss: NextHop,
    );

    /// The stream of prefetched single lookups of `addrs` into `out` ([`stream`]).
    ///
    /// # Safety
    /// As for [`Walk::batch`].
    unsafe fn stream<P: Preset, O: Output>(
        self,
        t: &Dxr<P>,
        addrs: &[u32],
        out: &mut [O],
        miss: NextHop,
    );

    /// One lookup.
    ///
    /// # Safety
    /// As for [`Walk::batch`].
    unsafe fn one<P: Preset>(self, t: &Dxr<P>, addr: u32) -> Option<NextHop>;
}

/// Implements [`Walk`] for a backend token with its walks: `$batch`, `$stream` and `$one`,
/// functions of the table, the token and the [`Walk`] arguments (the x86 ones compiled with
/// the backend's `#[target_feature]`).
macro_rules! walk {
    ($token:ty, $batch:path, $stream:path, $one:path) => {
        impl Walk for $token {
            #[inline(always)]
            unsafe fn batch<P: Preset, O: Output>(
                self,
                t: &Dxr<P>,
                addrs: &[u32],
                out: &mut [O],
                miss: NextHop,
            ) {
                // SAFETY: caller's contract; the token proves the CPU features.
                unsafe { $batch(t, self, addrs, out, miss) }
            }

            #[inline(always)]
            unsafe fn stream<P: Preset, O: Output>(
                self,
                t: &Dxr<P>,
                addrs: &[u32],
                out: &mut [O],
                miss: NextHop,
            ) {
                // SAFETY: caller's contract; the token proves the CPU features.
                unsafe { $stream(t, self, addrs, out, miss) }
            }

            #[inline(always)]
            unsafe fn one<P: Preset>(self, t: &Dxr<P>, addr: u32) -> Option<NextHop> {
                // SAFETY: caller's contract; the token proves the CPU features.
                unsafe { $one(t, self, addr) }
            }
        }
    };
}
// The portable walks, for the scalar search and NEON's (part of every aarch64 CPU, so its
// walk needs no `target_feature`).
walk!(Scalar, batch, stream, one_portable);
#[cfg(target_arch = "aarch64")]
walk!(crate::cpu::Neon, batch, stream, one_portable);

/// The walks compiled with each SIMD instruction set enabled, so the window search inlines.
#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use super::super::search::{Avx2, Avx512};
    use super::*;

    /// The walks of backend `$token` (batched, streamed, single), compiled with `$features`,
    /// and its [`Walk`].
    macro_rules! x86_walks {
        ($token:ident, $features:literal, $batch:ident, $stream:ident, $one:ident) => {
            #[doc = concat!("Batched walk with `", $features, "` enabled.")]
            ///
            /// # Safety
            /// `t` satisfies the structure invariants (the token proves the CPU features).
            #[target_feature(enable = $features)]
            pub unsafe fn $batch<P: Preset, O: Output>(
                t: &Dxr<P>,
                s: $token,
                addrs: &[u32],
                out: &mut [O],
                miss: NextHop,
            ) {
                // SAFETY: caller's contract.
                unsafe { batch(t, s, addrs, out, miss) }
            }

            #[doc = concat!("[`stream`] with `", $features, "` enabled.")]
            ///
            /// # Safety
            #[doc = concat!("As for [`", stringify!($batch), "`].")]
            #[target_feature(enable = $features)]
            pub unsafe fn $stream<P: Preset, O: Output>(
                t: &Dxr<P>,
                s: $token,
                addrs: &[u32],
                out: &mut [O],
                miss: NextHop,
            ) {
                // SAFETY: caller's contract.
                unsafe { stream(t, s, addrs, out, miss) }
            }

            #[doc = concat!("Single lookup with `", $features, "` enabled.")]
            ///
            /// # Safety
            #[doc = concat!("As for [`", stringify!($batch), "`].")]
            #[target_feature(enable = $features)]
            pub unsafe fn $one<P: Preset>(t: &Dxr<P>, s: $token, addr: u32) -> Option<NextHop> {
                // SAFETY: caller's contract.
                unsafe { one(t, s, addr, 0) }
            }

            walk!($token, $batch, $stream, $one);
        };
    }
    x86_walks!(
        Avx512,
        "avx512f,avx512bw,popcnt,bmi2",
        batch_avx512,
        stream_avx512,
        one_avx512
    );
    x86_walks!(Avx2, "avx2,popcnt,bmi2", batch_avx2, stream_avx2, one_avx2);
}
