//! The DXR lookup, single and batched, written once for every SIMD backend.
//!
//! A lookup reads the direct entry of its chunk; a resolved entry is the next-hop index. Else
//! the chunk's starts are narrowed by a branch-free binary search to one 64-byte window (only
//! chunks over 64 short or 32 long ranges need it), the window is searched in one SIMD
//! compare, and the rank picks the next-hop index (`format` has the layout); index 0 is "no route", every other index
//! is a real next hop, so no next-hop value is reserved.
//!
//! The batched walk runs groups of [`LANES`] lookups through a three-stage software
//! pipeline: a group's direct entries are prefetched, one round later read (and the first
//! line of each chunk's starts prefetched), one round later searched. Each miss then has a
//! whole round of other lookups' work to arrive behind, instead of stalling its own lookup.
//!
//! Every function here is `unsafe`: the SIMD tokens read without bounds checks, which is sound
//! only on a structure that satisfies the invariants `Dxr::validate` checks (every `Dxr` does).

use super::format::{Entry, Form};
use super::search::Search;
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

/// The next-hop index of `addr`, whose chunk's direct entry is `e`.
///
/// # Safety
/// `e` is an entry of a structure (with range array `ranges`) that satisfies the invariants.
#[inline(always)]
unsafe fn index<P: Preset, S: Search>(s: S, ranges: &[u8], e: Entry, addr: u32) -> u32 {
    let form = e.form();
    if form == Form::Resolved {
        return e.hop();
    }
    // SAFETY: a valid chunk's count, starts, indices and every 64-byte window from one of its
    // starts lie inside `ranges` (its tail padding), and its first start is 0, so every rank
    // is at least 1.
    unsafe {
        let n = u32::from_le_bytes(s.read::<4>(ranges, e.offset())) as usize;
        let at = e.offset() + 4;
        let low = addr & ((1 << (32 - P::K)) - 1);
        if form == Form::Short {
            let x = (low >> (24 - P::K)) as u8;
            let (mut lo, mut len) = (0, n);
            while len > 64 {
                let half = len / 2;
                let start = s.read::<1>(ranges, at + lo + half)[0];
                lo = if start <= x { lo + half } else { lo };
                len -= half;
            }
            let rank = lo + s.count_le8(s.window(ranges, at + lo), len, x);
            return u32::from(s.read::<1>(ranges, at + n + rank - 1)[0]);
        }
        let x = low as u16;
        let (mut lo, mut len) = (0, n);
        while len > 32 {
            let half = len / 2;
            let start = u16::from_le_bytes(s.read::<2>(ranges, at + 2 * (lo + half)));
            lo = if start <= x { lo + half } else { lo };
            len -= half;
        }
        let rank = lo + s.count_le16(s.window(ranges, at + 2 * lo), len, x);
        if form == Form::Long {
            u32::from(u16::from_le_bytes(
                s.read::<2>(ranges, at + 2 * (n + rank - 1)),
            ))
        } else {
            u32::from_le_bytes(s.read::<4>(ranges, at + 2 * n + 4 * (rank - 1)))
        }
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
    // SAFETY: a chunk number is below 2^K = `direct.len()`; indices are below `hops.len()`
    // (structure invariants).
    unsafe {
        let e = Entry(s.at(&t.direct, (addr >> (32 - P::K)) as usize));
        let i = index::<P, S>(s, &t.ranges, e, addr);
        O::from_hop(s.at(&t.hops, i as usize), i, miss)
    }
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
    let (direct, ranges, hops) = (&*t.direct, &*t.ranges, &*t.hops);
    let chunk = |a: u32| (a >> (32 - P::K)) as usize;
    let groups = addrs.len().min(out.len()) / LANES;
    let mut entries = [[Entry(0); LANES]; 2];
    for round in 0..groups + 2 {
        if round < groups {
            for &a in &addrs[round * LANES..][..LANES] {
                s.prefetch(direct.as_ptr().wrapping_add(chunk(a)));
            }
        }
        if let Some(g) = round.checked_sub(1).filter(|&g| g < groups) {
            let slot = &mut entries[g % 2];
            for (e, &a) in slot.iter_mut().zip(&addrs[g * LANES..][..LANES]) {
                // SAFETY: a chunk number is below `direct.len()` (invariants).
                *e = Entry(unsafe { s.at(direct, chunk(a)) });
                // A resolved entry's "offset" is garbage, but a prefetch never faults.
                s.prefetch(ranges.as_ptr().wrapping_add(e.offset()));
            }
        }
        if let Some(g) = round.checked_sub(2) {
            let lanes = g * LANES..(g + 1) * LANES;
            for ((e, &a), o) in entries[g % 2]
                .iter()
                .zip(&addrs[lanes.clone()])
                .zip(&mut out[lanes])
            {
                // SAFETY: `e` is a direct entry of `t` (invariants for the rest).
                unsafe {
                    let i = index::<P, S>(s, ranges, *e, a);
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

/// The walks compiled with each SIMD instruction set enabled, so the window search inlines.
#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use super::super::search::{Avx2, Avx512};
    use super::*;

    /// Batched walk with AVX-512 enabled.
    ///
    /// # Safety
    /// `t` satisfies the structure invariants (the token proves the CPU features).
    #[target_feature(enable = "avx512f,avx512bw,popcnt")]
    pub unsafe fn batch_avx512<P: Preset, O: Output>(
        t: &Dxr<P>,
        s: Avx512,
        addrs: &[u32],
        out: &mut [O],
        miss: NextHop,
    ) {
        // SAFETY: caller's contract.
        unsafe { batch(t, s, addrs, out, miss) }
    }

    /// Single lookup with AVX-512 enabled.
    ///
    /// # Safety
    /// As for [`batch_avx512`].
    #[target_feature(enable = "avx512f,avx512bw,popcnt")]
    pub unsafe fn one_avx512<P: Preset>(t: &Dxr<P>, s: Avx512, addr: u32) -> Option<NextHop> {
        // SAFETY: caller's contract.
        unsafe { one(t, s, addr, 0) }
    }

    /// Batched walk with AVX2 enabled.
    ///
    /// # Safety
    /// As for [`batch_avx512`].
    #[target_feature(enable = "avx2,popcnt")]
    pub unsafe fn batch_avx2<P: Preset, O: Output>(
        t: &Dxr<P>,
        s: Avx2,
        addrs: &[u32],
        out: &mut [O],
        miss: NextHop,
    ) {
        // SAFETY: caller's contract.
        unsafe { batch(t, s, addrs, out, miss) }
    }

    /// Single lookup with AVX2 enabled.
    ///
    /// # Safety
    /// As for [`batch_avx512`].
    #[target_feature(enable = "avx2,popcnt")]
    pub unsafe fn one_avx2<P: Preset>(t: &Dxr<P>, s: Avx2, addr: u32) -> Option<NextHop> {
        // SAFETY: caller's contract.
        unsafe { one(t, s, addr, 0) }
    }
}
