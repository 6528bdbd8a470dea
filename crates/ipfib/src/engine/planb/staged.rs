//! Chunks the direct table answers alone, and the staged batch that uses them.
//!
//! Every lookup of the uniform-depth walk takes all of the table's tree steps, even when its
//! chunk holds a single answer: a lookup into `2002::/16` (one prefix, 29 % of the dfz10
//! table's uniform trace) walks five levels of padding nodes to learn what the direct table
//! could have said. Sorting lanes by chunk depth lost three times (BENCHMARKS.md, design
//! table: the scalar re-staging cost more than the L1-resident lines it saved). Two classes
//! staged with AVX-512 compress instructions is cheap enough: a block of addresses is split
//! once into "answered" lanes, written at once, and "walk" lanes, packed and walked by the
//! usual pipeline.
//!
//! The staged batch reads [`entries`]: a copy of the direct table in which each answered
//! chunk's entry is replaced by its answer ([`ANSWERED`], [`ANSWERED_MISS`] and a 30-bit
//! hop), so one gather gives a lane either its answer or its entry node. It exists only where
//! the staged walk runs: IPv6 tables of depth 3 or more (no [`LEAF_ENTRY`] marks, whose bit it
//! reuses) in one segment (static tables, and live tables after compaction; between
//! compactions a live table takes the uniform walk).
//!
//! [`LEAF_ENTRY`]: super::layout::LEAF_ENTRY

use std::collections::HashMap;

use super::layout::{self, Family, Key, DIRECT_BITS};
use super::search::{self, scalar::Scalar};
use super::PlanB;
use crate::route_table::NextHop;

/// Marks an entry of [`entries`] that is an answer, not an entry node.
pub const ANSWERED: u32 = 1 << 31;
/// In an answered entry: the chunk has no route.
pub const ANSWERED_MISS: u32 = 1 << 30;
/// In an answered entry: the next hop.
pub const ANSWERED_HOP: u32 = ANSWERED_MISS - 1;

/// Addresses a staging decision covers: the batch samples each block and stages it only when
/// enough of its lanes end in the direct table (see [`worth_staging`]).
pub const BLOCK: usize = 1024;

/// Lanes sampled per block, one every `BLOCK / SAMPLES` addresses. Few: a sample is an
/// ordinary load of an address the uniform walk would prefetch non-temporally, and 64 per
/// block cost the matched trace 4–8 % (in-process A/B on dfz10), 8 nothing measurable.
pub const SAMPLES: usize = 8;

/// Whether a block whose sample holds `answered` lanes that end in the direct table is worth
/// staging: one in eight or more. Measured on dfz10 (in-process A/B, 2 M addresses): staging
/// every block costs 0.82× on the matched trace (no lane answered), is about even on the
/// uniform trace (29 % answered) and gains 2.1–2.6× where nearly all are (the space trace,
/// ris-all's uniform trace). The bar is low so that the uniform trace's blocks do not flip
/// between the two walks: at a quarter they did, and the short runs cost 0.90×.
#[inline(always)]
pub fn worth_staging(answered: usize) -> bool {
    answered * 8 >= SAMPLES
}

/// The staged direct table of `t`, or `None` where the staged walk does not run (see the
/// module docs). Chunks with the same entry node have the same answer (a tree answers for a
/// whole chunk's key range), so each distinct entry is walked once: the empty and one-route
/// chunks of a real table share a handful.
pub fn entries<A: Family>(t: &PlanB<A>) -> Option<Box<[u32]>> {
    if !A::STAGED || t.depth < 3 || t.segments.len() != 1 {
        return None;
    }
    let mut seen: HashMap<u32, u32> = HashMap::new();
    let low_bits = A::COARSE_BITS - DIRECT_BITS;
    let entries = (0..1u64 << DIRECT_BITS)
        .map(|chunk| {
            let entry = t.direct[chunk as usize];
            *seen
                .entry(entry)
                .or_insert_with(|| answer_of(t, chunk << low_bits).unwrap_or(entry))
        })
        .collect();
    Some(entries)
}

/// The answered entry for the chunk starting at coarse cell `first`, if the whole chunk has
/// one answer: its first and last key reach the same position of the same leaf (keys are
/// sorted, so no boundary lies between them), the position is not a fallback cell, and the
/// hop fits [`ANSWERED_HOP`].
fn answer_of<A: Family>(t: &PlanB<A>, first: u64) -> Option<u32> {
    let last = first | ((1u64 << (A::COARSE_BITS - DIRECT_BITS)) - 1);
    let (leaf, rank) = t.leaf_position(Scalar, first);
    if (leaf, rank) != t.leaf_position(Scalar, last) {
        return None;
    }
    let line = &t.segments[0].lines[leaf as usize];
    let (hop, flags) = if t.narrow {
        (
            A::Key::hop::<true>(line, rank),
            A::Key::flags::<true>(line) >> rank,
        )
    } else {
        (
            A::Key::hop::<false>(line, rank),
            A::Key::flags::<false>(line) >> rank,
        )
    };
    if flags & layout::CELL != 0 {
        return None;
    }
    if flags & layout::NO_ROUTE != 0 {
        return Some(ANSWERED | ANSWERED_MISS);
    }
    (hop <= ANSWERED_HOP).then_some(ANSWERED | hop)
}

/// The staged batch of `addrs` into `out`, if `t` has a staged direct table and its backend a
/// staged walk (AVX-512); false, with nothing written, otherwise.
pub fn batch(t: &PlanB<u128>, addrs: &[u128], out: &mut [NextHop], miss: NextHop) -> bool {
    let Some(entries) = t.staged.as_deref() else {
        return false;
    };
    match t.dispatch {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the token proves the CPU features; `t` satisfies the structure invariants
        // and has a staged table only when it has one segment and depth 3 or more
        // ([`entries`]), whose table `entries` is.
        search::Dispatch::Avx512(token) => {
            unsafe { super::walk::x86::staged_avx512(t, token, entries, addrs, out, miss) };
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Backend, Build, BuildOptions, Lookup};
    use crate::interval::Intervals;
    use crate::prefix::Prefix;
    use crate::route_table::RouteTable;

    /// An IPv6 table deep enough for the staged walk: a chunk (2001::/16) with thousands of
    /// boundaries, beside chunks one route covers whole, a chunk with no route, a fallback
    /// cell, a hop too wide for an answered entry, and routes at the top of the space.
    fn table() -> RouteTable<u128> {
        let mut routes: Vec<(Prefix<u128>, NextHop)> = (0..6000u128)
            .map(|i| {
                let addr = (0x2001_0db8u128 << 96) | ((i * 7) << 80);
                (Prefix::covering(addr, 48), (i % 11) as NextHop)
            })
            .collect();
        routes.extend([
            (Prefix::covering(0x2000u128 << 112, 4), 1),
            (Prefix::covering(0x2002u128 << 112, 16), 2),
            (Prefix::covering(0x2003u128 << 112, 16), u32::MAX - 1),
            (Prefix::covering(0x2004u128 << 112, 20), 4),
            (
                Prefix::covering((0x2005_0001_0002u128 << 80) | (3 << 64), 64),
                5,
            ),
            (Prefix::covering(0xffffu128 << 112, 16), 6),
            (Prefix::covering(u128::MAX, 128), 7),
        ]);
        routes.into_iter().collect()
    }

    fn chunk_range(chunk: u128) -> [u128; 3] {
        let first = chunk << 112;
        [first, first | (u128::MAX >> 17), first | (u128::MAX >> 16)]
    }

    #[test]
    fn answered_entries_are_what_every_address_of_the_chunk_gets() {
        let table = table();
        let intervals = Intervals::from_table(&table);
        let planb = PlanB::build(&table, &BuildOptions::default()).unwrap();
        assert!(planb.depth >= 3, "deep enough to stage");
        let entries = planb.staged.as_deref().expect("a staged table");
        let mut answered = 0;
        for (chunk, &entry) in entries.iter().enumerate() {
            if entry & ANSWERED == 0 {
                assert_eq!(
                    entry, planb.direct[chunk],
                    "a walk entry is the direct entry"
                );
                continue;
            }
            answered += 1;
            let want = (entry & ANSWERED_MISS == 0).then_some(entry & ANSWERED_HOP);
            for addr in chunk_range(chunk as u128) {
                assert_eq!(intervals.lookup(addr), want, "{addr:#x}");
            }
        }
        let is_answered = |chunk: usize| entries[chunk] & ANSWERED != 0;
        // One route, no route, a covering /4: answered. Boundaries inside (a /20, a /64, the
        // deep chunk, the /128 at the top), or a hop wider than 30 bits: walked.
        for chunk in [0x2002, 0x0001, 0x2fff, 0xfffe] {
            assert!(is_answered(chunk), "{chunk:#x} answered");
        }
        for chunk in [0x2001, 0x2003, 0x2004, 0x2005, 0xffff] {
            assert!(!is_answered(chunk), "{chunk:#x} walked");
        }
        assert!(
            answered > 60_000,
            "most chunks are empty or covered: {answered}"
        );
    }

    #[test]
    fn only_one_segment_ipv6_tables_of_depth_three_or_more_are_staged() {
        let shallow: RouteTable<u128> = [(Prefix::covering(0x2001u128 << 112, 16), 1)]
            .into_iter()
            .collect();
        let planb = PlanB::build(&shallow, &BuildOptions::default()).unwrap();
        assert_eq!(planb.staged.is_some(), planb.depth >= 3);
        let v4: RouteTable<u32> = (0..3000u32)
            .map(|i| (Prefix::covering(0x0a00_0000 | (i << 8), 24), i))
            .collect();
        assert!(PlanB::build(&v4, &BuildOptions::default())
            .unwrap()
            .staged
            .is_none());
    }

    /// Batches of every shape through `lookup_batch_raw`: blocks the sample stages (random
    /// addresses, most in answered chunks), blocks it does not (all in the deep chunk and the
    /// fallback cell), mixed runs and short tails, each miss value, against the intervals.
    #[test]
    fn staged_batches_answer_as_the_intervals_do() {
        if !Backend::Avx512.is_available() {
            eprintln!("skipped: the staged walk needs AVX-512, which this CPU lacks");
            return;
        }
        let table = table();
        let intervals = Intervals::from_table(&table);
        let planb = PlanB::build(&table, &BuildOptions::with_backend(Backend::Avx512)).unwrap();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut random = || (u128::from(next()) << 64) | u128::from(next());
        let spread: Vec<u128> = (0..4 * BLOCK).map(|_| random()).collect();
        let deep: Vec<u128> = (0..3 * BLOCK)
            .map(|i| match i % 3 {
                0 => (0x2001_0db8u128 << 96) | (random() >> 32),
                1 => (0x2005_0001_0002u128 << 80) | (random() >> 48),
                _ => (0x2001u128 << 112) | (random() >> 16),
            })
            .collect();
        let staged_block = |block: &[u128]| {
            let answered = block
                .iter()
                .step_by(BLOCK / SAMPLES)
                .filter(|&&a| planb.staged.as_deref().unwrap()[(a >> 112) as usize] & ANSWERED != 0)
                .count();
            worth_staging(answered)
        };
        assert!(
            staged_block(&spread[..BLOCK]),
            "random addresses are staged"
        );
        assert!(!staged_block(&deep[..BLOCK]), "the deep chunk is not");
        let mixed: Vec<u128> = [&spread[..BLOCK], &deep[..2 * BLOCK], &spread[BLOCK..]]
            .concat()
            .into_iter()
            .chain(chunk_range(0x2002).into_iter().chain([u128::MAX, 0]))
            .collect();
        for addrs in [&mixed[..], &spread[..], &deep[..]] {
            for (start, len) in [
                (0, addrs.len()),
                (3, 1023),
                (0, 1024),
                (17, 1025),
                (5, 2 * BLOCK + 33),
                (0, 7),
                (0, 0),
            ] {
                let addrs = &addrs[start.min(addrs.len())..(start + len).min(addrs.len())];
                for miss in [0, 7, u32::MAX] {
                    let mut out = vec![miss ^ 1; addrs.len()];
                    planb.lookup_batch_raw(addrs, &mut out, miss).unwrap();
                    for (&a, &got) in addrs.iter().zip(&out) {
                        assert_eq!(
                            got,
                            intervals.lookup(a).unwrap_or(miss),
                            "{a:#x}, miss {miss}"
                        );
                    }
                }
            }
        }
    }
}
