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

use super::layout::{Decoded, Family, Key, DIRECT_BITS};
use super::search::scalar::Scalar;
use super::PlanB;
use crate::addr::{AddressInput, InputLayout};
use crate::engine::Backend;
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
/// module docs; also on CPUs without AVX-512, and for tables of 2^30 lines or more, whose
/// entries could not be told from answers). Chunks with the same entry node have the same
/// answer: the test in [`answer_of`] walks the same two keys (the first and the last of a
/// chunk) from that node. So each distinct entry is walked once, and runs of equal entries
/// (the empty chunks of a real table, mostly contiguous) skip the map too: 65,536 map lookups
/// alone cost a small table's build ~3 ms (`builder.rs`).
pub fn entries<A: Family>(t: &PlanB<A>) -> Option<Box<[u32]>> {
    let staged = A::STAGED && Backend::Avx512.is_available();
    let lines = t.segments.iter().map(|s| s.lines.len()).sum::<usize>();
    if !staged || t.depth < 3 || t.segments.len() != 1 || lines > ANSWERED_MISS as usize {
        return None;
    }
    let mut seen: HashMap<u32, u32> = HashMap::new();
    let mut last: Option<(u32, u32)> = None;
    let low_bits = A::COARSE_BITS - DIRECT_BITS;
    let entries = (0..1u64 << DIRECT_BITS)
        .map(|chunk| {
            let entry = t.direct[chunk as usize];
            match last {
                Some((e, staged)) if e == entry => staged,
                _ => {
                    let staged = *seen
                        .entry(entry)
                        .or_insert_with(|| answer_of(t, chunk << low_bits).unwrap_or(entry));
                    last = Some((entry, staged));
                    staged
                }
            }
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
    match A::Key::decode_in(line, rank, t.narrow) {
        Decoded::Cell(_) => None,
        Decoded::NoRoute => Some(ANSWERED | ANSWERED_MISS),
        Decoded::Hop(hop) => (hop <= ANSWERED_HOP).then_some(ANSWERED | hop),
    }
}

/// The staged batch of `addrs` into `out`, if `t` has a staged direct table, its backend a
/// staged walk (AVX-512) and the addresses a layout it loads ([`InputLayout`]: the integers
/// or their network-order bytes); false, with nothing written, otherwise. Batches of 2^32
/// addresses or more take the uniform walk: the staged one keeps lane positions in 32 bits.
#[cfg(target_arch = "x86_64")]
pub fn batch<I: AddressInput<u128>>(
    t: &PlanB<u128>,
    addrs: &[I],
    out: &mut [NextHop],
    miss: NextHop,
) -> bool {
    let Some(entries) = t.staged.as_deref() else {
        return false;
    };
    let super::search::Dispatch::Avx512(token) = t.dispatch else {
        return false;
    };
    if u32::try_from(addrs.len()).is_err() {
        return false;
    }
    use super::walk::x86::staged_avx512;
    // SAFETY: the token proves the CPU features; `t` satisfies the structure invariants and
    // has a staged table only when it has one segment and depth 3 or more ([`entries`]),
    // whose table `entries` is; the layout says what `I` is; positions fit 32 bits.
    unsafe {
        match I::LAYOUT {
            InputLayout::Native => staged_avx512::<I, false>(t, token, entries, addrs, out, miss),
            InputLayout::NetworkOrder => {
                staged_avx512::<I, true>(t, token, entries, addrs, out, miss)
            }
            _ => return false,
        }
    }
    true
}

/// No staged walk off x86-64.
#[cfg(not(target_arch = "x86_64"))]
pub fn batch<I: AddressInput<u128>>(
    _t: &PlanB<u128>,
    _addrs: &[I],
    _out: &mut [NextHop],
    _miss: NextHop,
) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Backend, Build, BuildOptions, DetailValue, Lookup};
    use crate::interval::Intervals;
    use crate::prefix::Prefix;
    use crate::route_table::RouteTable;

    /// An IPv6 table deep enough for the staged walk: a chunk (2001::/16) with thousands of
    /// boundaries, beside chunks one route covers whole, a chunk with no route, a fallback
    /// cell, and routes at the top of the space; `wide`: 2003::/16 has a hop too wide for an
    /// answered entry (and the leaves are wide), else one that fits 16 bits (narrow leaves).
    fn table(wide: bool) -> RouteTable<u128> {
        let wide_hop = if wide {
            u32::MAX - 1
        } else {
            u32::from(u16::MAX)
        };
        let mut routes: Vec<(Prefix<u128>, NextHop)> = (0..6000u128)
            .map(|i| {
                let addr = (0x2001_0db8u128 << 96) | ((i * 7) << 80);
                (Prefix::covering(addr, 48), (i % 11) as NextHop)
            })
            .collect();
        routes.extend([
            (Prefix::covering(0x2000u128 << 112, 4), 1),
            (Prefix::covering(0x2002u128 << 112, 16), 2),
            (Prefix::covering(0x2003u128 << 112, 16), wide_hop),
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
        if !Backend::Avx512.is_available() {
            eprintln!("skipped: staged tables are made only where AVX-512 runs them");
            return;
        }
        for wide in [false, true] {
            answered_entries_in(wide);
        }
    }

    fn answered_entries_in(wide: bool) {
        let table = table(wide);
        let intervals = Intervals::from_table(&table);
        let planb = PlanB::build(&table, &BuildOptions::default()).unwrap();
        assert_eq!(planb.narrow, !wide);
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
        for chunk in [0x2001, 0x2004, 0x2005, 0xffff] {
            assert!(!is_answered(chunk), "{chunk:#x} walked");
        }
        assert_eq!(
            is_answered(0x2003),
            !wide,
            "a /16 whose hop fits 30 bits or not"
        );
        assert!(
            answered > 60_000,
            "most chunks are empty or covered: {answered}"
        );
    }

    #[test]
    fn staged_tables_are_one_segment_ipv6_tables_of_depth_three_or_more() {
        let shallow: RouteTable<u128> = [(Prefix::covering(0x2001u128 << 112, 16), 1)]
            .into_iter()
            .collect();
        let planb = PlanB::build(&shallow, &BuildOptions::default()).unwrap();
        assert!(
            planb.depth < 3 && planb.staged.is_none(),
            "too shallow to stage"
        );
        let v4: RouteTable<u32> = (0..3000u32)
            .map(|i| (Prefix::covering(0x0a00_0000 | (i << 8), 24), i))
            .collect();
        let planb = PlanB::build(&v4, &BuildOptions::default()).unwrap();
        assert!(planb.staged.is_none(), "IPv4");
        // A partial rebuild adds a segment: the rebuilt table takes the uniform walk.
        let mut deep = table(false);
        let changed = Prefix::covering(0x2001_0db8_0009u128 << 80, 48);
        deep.insert(changed, 3);
        let planb = PlanB::build(&table(false), &BuildOptions::default()).unwrap();
        assert_eq!(
            planb.staged.is_some(),
            Backend::Avx512.is_available(),
            "a deep IPv6 table is staged where AVX-512 runs"
        );
        let rebuilt = planb
            .rebuild(&deep, &[changed], &BuildOptions::default())
            .expect("a one-chunk change rebuilds in part")
            .unwrap();
        let detail = |name: &str| {
            rebuilt
                .describe()
                .into_iter()
                .find(|d| d.name == name)
                .map(|d| d.value)
        };
        assert_eq!(detail("segments"), Some(DetailValue::Count(2)));
        assert_eq!(detail("staged_bytes"), Some(DetailValue::Bytes(0)));
    }

    /// Batches of every shape through `lookup_batch_raw` and `lookup_batch_bytes_raw`: blocks the sample stages (random
    /// addresses, most in answered chunks), blocks it does not (all in the deep chunk and the
    /// fallback cell), mixed runs and short tails, each miss value, against the intervals.
    #[test]
    fn staged_batches_answer_as_the_intervals_do() {
        if !Backend::Avx512.is_available() {
            eprintln!("skipped: the staged walk needs AVX-512, which this CPU lacks");
            return;
        }
        for wide in [false, true] {
            staged_batches_in(wide);
        }
    }

    fn staged_batches_in(wide: bool) {
        let table = table(wide);
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
        // Half answered, half walking: staged, with hundreds of walk lanes per block, so the
        // packed lanes go through the pipeline's groups as well as the single remainder.
        let halves: Vec<u128> = spread
            .iter()
            .zip(&deep)
            .flat_map(|(&a, &d)| [a, d])
            .collect();
        assert!(
            staged_block(&spread[..BLOCK]),
            "random addresses are staged"
        );
        assert!(staged_block(&halves[..BLOCK]), "half of them too");
        assert!(!staged_block(&deep[..BLOCK]), "the deep chunk is not");
        let mixed: Vec<u128> = [
            &spread[..BLOCK],
            &deep[..2 * BLOCK],
            &halves[..],
            &spread[BLOCK..],
        ]
        .concat()
        .into_iter()
        .chain(chunk_range(0x2002).into_iter().chain([u128::MAX, 0]))
        .collect();
        for addrs in [&mixed[..], &spread[..], &deep[..], &halves[..]] {
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
                let bytes: Vec<[u8; 16]> = addrs.iter().map(|a| a.to_be_bytes()).collect();
                for miss in [0, 7, u32::MAX] {
                    let mut out = vec![miss ^ 1; addrs.len()];
                    planb.lookup_batch_raw(addrs, &mut out, miss).unwrap();
                    // The same addresses as network-order bytes (byte-swapped as loaded).
                    let mut from_bytes = vec![miss ^ 1; addrs.len()];
                    planb
                        .lookup_batch_bytes_raw(&bytes, &mut from_bytes, miss)
                        .unwrap();
                    for ((&a, &got), &got_bytes) in addrs.iter().zip(&out).zip(&from_bytes) {
                        let want = intervals.lookup(a).unwrap_or(miss);
                        assert_eq!(got, want, "{a:#x}, miss {miss}");
                        assert_eq!(got_bytes, want, "{a:#x} as bytes, miss {miss}");
                    }
                }
            }
        }
    }
}
