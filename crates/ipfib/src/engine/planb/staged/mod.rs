//! Chunks the direct table answers alone, and the staged batch that uses them.
//!
//! Every lookup of the uniform-depth walk takes all of the table's tree steps, even when its
//! chunk holds a single answer: a lookup into `2002::/16` (one prefix, 29 % of the dfz10
//! table's uniform trace) walks five levels of padding nodes to learn what the direct table
//! could have said. Sorting lanes by chunk depth lost three times (BENCHMARKS.md, design
//! table: the scalar re-staging cost more than the L1-resident lines it saved). Two classes
//! are cheap enough: a block of addresses is split once into "answered" lanes, written at
//! once, and "walk" lanes, packed and walked by the usual pipeline ([`kernel`], written once
//! for every backend; each backend brings its own staging step).
//!
//! The staged batch reads a [`Staged`] table: a copy of the direct table in which each
//! answered chunk's entry is replaced by its answer ([`ANSWERED`], [`ANSWERED_MISS`] and a
//! 30-bit hop), so one gather gives a lane either its answer or its entry node. It exists only
//! where the staged walk runs: IPv6 tables of depth 3 or more (no [`LEAF_ENTRY`] marks, whose
//! bit it reuses) in one segment (static tables, and live tables after compaction; between
//! compactions a live table takes the uniform walk).
//!
//! Chunks a single answer does not cover can still be mostly answered a few bits further
//! down: in dfz10's uniform trace 29 % of the addresses are in one-answer /16 chunks, but 60 %
//! in one-answer /24 blocks and 99 % in /32 blocks (allocations are /19 to /32). So some
//! chunks get a *sub-table* ([`SPLIT`]): `2^b` entries for the blocks of the next `b` bits
//! (`b` chosen per chunk), read with a second gather. Each is an answer, or where the walk
//! starts: a block that no key of the upper levels splits lies inside one leaf
//! ([`ENTER_LEAF`]: one search left), inside the node above it ([`ENTER_NEAR`]: two) or the
//! one above that ([`ENTER_MID`]: three), and the entry names that node; other blocks start
//! at the chunk's entry node. The staged batch packs walk lanes in four classes by where they
//! start, each walked by a pipeline as deep as its searches. Which chunks, and how wide, is
//! chosen greedily by the searches a byte of sub-table saves per lookup ([`choice`]), for two
//! traffics evenly mixed: addresses spread over the routed space, and addresses in
//! routes picked evenly (matched traffic), within [`sub_budget`] (a saved table keeps the
//! choice, [`Staged::splits`], and an open only makes those sub-tables). Spread traffic is
//! mostly answered by the tables; matched traffic, whose lookups end in small prefixes, is
//! mostly told where to start (dfz10's matched trace: 4.28 lines per lookup against the
//! uniform-depth walk's 5.00).
//!
//! [`LEAF_ENTRY`]: super::layout::LEAF_ENTRY

use std::collections::HashMap;

use choice::{split, sub_tables, Candidate};

use super::layout::{Decoded, Family, Key, DIRECT_BITS};
use super::search::scalar::Scalar;
use super::PlanB;
use crate::addr::{AddressInput, InputLayout};
use crate::route_table::NextHop;
use kernel::Kernel;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod choice;
mod kernel;

/// Marks an entry of [`Staged`] that is an answer, not an entry node.
pub const ANSWERED: u32 = 1 << 31;
/// In an answered entry: the chunk has no route.
pub const ANSWERED_MISS: u32 = 1 << 30;
/// In an answered entry: the next hop.
pub const ANSWERED_HOP: u32 = ANSWERED_MISS - 1;
/// Marks a direct entry of [`Staged`] (without [`ANSWERED`]) whose chunk has a sub-table:
/// its low [`SUB_SHIFT_AT`] bits are the sub-table's first index, the next five the shift
/// that turns a lane's key (the 32 address bits below the chunk's) into its index there.
/// Entry nodes are below 2^28 ([`Staged::of`] declines larger tables), so the bit is free.
pub const SPLIT: u32 = 1 << 30;
/// Where a split entry's shift starts; the bits below hold its sub-table's first index.
pub const SUB_SHIFT_AT: u32 = 22;
/// The sub-table's first index in a split entry.
pub const SUB_BASE: u32 = (1 << SUB_SHIFT_AT) - 1;
/// In a walk entry of a sub-table: the lane enters its block's leaf, one search from its
/// answer (the entry's low bits are the leaf, [`ENTRY_NODE`]).
pub const ENTER_LEAF: u32 = 1 << 29;
/// In a walk entry of a sub-table: the lane enters the inner node above its block's leaf,
/// two searches from its answer.
pub const ENTER_NEAR: u32 = 1 << 28;
/// In a walk entry of a sub-table, both marks: the lane enters the inner node two above its
/// block's leaf, three searches from its answer (in tables of depth 4 or more; in a table of
/// depth 3 that node is the entry node, and the entry is a plain one).
pub const ENTER_MID: u32 = ENTER_LEAF | ENTER_NEAR;
/// The node a walk entry names: a chunk's entry node, or with [`ENTER_LEAF`] or
/// [`ENTER_NEAR`] a node deeper in its tree. [`Staged::of`] declines tables with more lines.
pub const ENTRY_NODE: u32 = ENTER_NEAR - 1;
/// Bits of a key: the coarse address bits below the chunk's (IPv6's 48 less 16).
const KEY_BITS: u32 = 32;
/// Address bits below the chunk's that a sub-table may resolve: 2^14 entries (64 KiB) at
/// most, one chunk's whole budget.
const SUB_WIDTHS: std::ops::RangeInclusive<u32> = 2..=14;

/// Table depths the staged walk is compiled for (`kernel`): a walk of one
/// inner level or none gains nothing from staging, and seven levels need more than 2^32 lines.
pub const STAGED_DEPTHS: std::ops::RangeInclusive<usize> = 3..=6;

/// Addresses a staging decision covers at most: the batch samples each block and stages it
/// only when the staged tables answer enough of its lanes (see [`worth_staging`]). 4,096
/// rather than 1,024: a block's walk lanes go through their pipelines in runs four times as
/// long, so the pipelines fill and drain a quarter as often (dfz10 uniform 1.06–1.12×, space
/// 1.05×, bart-tier1 IPv6 uniform 1.05–1.09× in one process; matched even).
pub const BLOCK: usize = 4096;

/// The shortest block staged: the last block of a batch may be shorter than [`BLOCK`] (a
/// multiple of 16 addresses, the staging step), so that batches from `MIN_BLOCK` addresses on
/// stage as they did with blocks of this length.
pub const MIN_BLOCK: usize = 1024;

/// Lanes sampled per block, evenly spread. Few: a sample is an ordinary load of an address
/// the uniform walk would prefetch non-temporally, and 64 per block of 1,024 cost the matched
/// trace 4–8 % (in-process A/B on dfz10), 8 nothing measurable.
pub const SAMPLES: usize = 8;

/// The blocks a staged batch of `len` addresses is cut into, in order: whole blocks of
/// [`BLOCK`], then one of at least [`MIN_BLOCK`] and a multiple of 16 if what is left allows.
/// The addresses after the last block (fewer than `MIN_BLOCK`, or than 16) take the uniform
/// walk. The batch and the lines model ([`super::lines`]) both cut through here.
pub fn blocks(len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let size = match len - at {
            left if left >= BLOCK => BLOCK,
            left if left >= MIN_BLOCK => left / 16 * 16,
            _ => return None,
        };
        at += size;
        Some(at - size..at)
    })
}

/// The [`SAMPLES`] addresses of `block` its staging decision reads, evenly spread from its
/// first (the batch asks for them a block ahead).
#[inline(always)]
pub fn sample<T>(block: &[T]) -> impl Iterator<Item = &T> {
    block
        .iter()
        .step_by((block.len() / SAMPLES).max(1))
        .take(SAMPLES)
}

/// Which lanes of a block's sample count towards staging it ([`Staged::stages`]), per
/// backend ([`rule`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Lanes the staged tables answer: the backends whose staging step costs more than the
    /// searches a deeper start saves.
    Answered,
    /// Lanes answered, or started below their entry node (the matched traffic the sub-tables
    /// are also chosen for).
    AnsweredOrDeeper,
}

/// Whether a block whose sample holds `saving` lanes that count under the backend's [`Rule`]
/// is worth staging: three in eight or more. Staging every block costs 0.82× on dfz10's
/// matched trace when no lane is answered and every lane walks from its entry node, and
/// breaks even near 30 % answered (dfz10's uniform trace before sub-tables: in-process A/B,
/// 2 M addresses). Counting lanes that start deeper stages the blocks of a matched trace too:
/// with AVX-512, bart-tier1 IPv6 matched +20–25 %, dfz10 matched +8–12 % in some windows of a
/// shared Xeon and −5–10 % in others (`ipfib bench`, BENCHMARKS.md "Session 20"). Near the
/// bar either walk costs about the same, so blocks that flip between them cost little.
#[inline(always)]
fn worth_staging(saving: usize) -> bool {
    saving * 8 >= 3 * SAMPLES
}

/// Bytes of sub-tables a table of `line_bytes` of trees may have: an eighth of its trees, and
/// 128 KiB at most. On dfz10 (1 MiB of lines, 127 KiB of sub-tables) lines per lookup are
/// 4.28 matched and 2.25 uniform, against 4.50 and 2.36 at 64 KiB, and the table stays under
/// 8 bytes per prefix (7.4). At 192 KiB the matched trace ran no faster and less evenly
/// (`ipfib bench`, BENCHMARKS.md "Session 20").
pub fn sub_budget(line_bytes: usize) -> usize {
    (line_bytes / 8).min(128 << 10)
}

/// The tables the staged batch reads: the direct table with answers ([`ANSWERED`]) and split
/// entries ([`SPLIT`]), and the sub-tables split entries name.
#[derive(Clone, Debug)]
pub struct Staged {
    /// One entry per chunk: an answer, an entry node, or a split entry.
    pub entries: Box<[u32]>,
    /// Every split chunk's sub-table, one after another: answers or the chunk's entry node.
    pub sub: Box<[u32]>,
}

impl Staged {
    /// The staged tables of `t`, or `None` where the staged walk does not run (see the module
    /// docs; also for depths the staged walk is not compiled for, and for tables of more than
    /// 2^28 lines, whose entries could not be told from answers, split entries and the
    /// classes of walk entries). They depend on the structure alone, not on the backend or
    /// the CPU: every backend runs the staged walk, so a table has the same bytes, `stats` and
    /// saved file wherever it is built.
    pub fn of<A: Family>(t: &PlanB<A>) -> Option<Staged> {
        if !stages_structure(t) {
            return None;
        }
        let mut entries = answered_entries(t);
        let sub = split(t, &mut entries, sub_budget(t.line_bytes()) / 4);
        Some(Staged { entries, sub })
    }

    /// The staged tables of `t` with the sub-tables `splits` names ([`Staged::splits`] of the
    /// same structure, read from a saved table), so that opening a table does not make the
    /// choice again (the greedy's valuation was a third of opening dfz10). Any choice gives
    /// right answers, the sub-tables being made from the structure, so `splits` is only
    /// checked for what keeps the staged walk in bounds: ascending candidate chunks, widths of
    /// [`SUB_WIDTHS`], and entries within the budget [`Staged::of`] keeps to. `Ok(None)` where
    /// the staged walk does not run (`splits` is checked the same).
    pub fn with_splits<A: Family>(t: &PlanB<A>, splits: &[u32]) -> Result<Option<Staged>, String> {
        let chosen = checked_splits(t, splits)?;
        if !stages_structure(t) {
            return Ok(None);
        }
        let mut entries = answered_entries(t);
        let candidates = chosen
            .iter()
            .map(|&(chunk, b)| (Candidate::new(t, chunk), b));
        let sub = sub_tables(t, &mut entries, candidates);
        Ok(Some(Staged { entries, sub }))
    }

    /// The choice of sub-tables [`Staged::of`] makes for `t` (as [`Staged::splits`] gives
    /// it), on any CPU: `None` only where the structure does not take the staged walk (the
    /// family, the depth, several segments). A saved table holds it whenever the structure
    /// could be staged, and an open makes the sub-tables without choosing.
    pub fn choice<A: Family>(t: &PlanB<A>) -> Option<Vec<u32>> {
        if let Some(staged) = &t.staged {
            return Some(staged.splits());
        }
        if !stages_structure(t) {
            return None;
        }
        let mut entries = answered_entries(t);
        split(t, &mut entries, sub_budget(t.line_bytes()) / 4);
        Some(split_pairs(&entries))
    }

    /// The choice of sub-tables: each split chunk and its width, as `[chunk, bits]` pairs in
    /// chunk order ([`Staged::with_splits`] takes them back).
    pub fn splits(&self) -> Vec<u32> {
        split_pairs(&self.entries)
    }

    /// The entry a lane with coarse address `coarse` reads: its chunk's, or its block's in the
    /// chunk's sub-table.
    pub fn entry(&self, coarse: u64) -> u32 {
        let chunk = (coarse >> KEY_BITS) as usize;
        let entry = self.entries[chunk];
        if !is_split(entry) {
            return entry;
        }
        let key = coarse as u32;
        let shift = (entry >> SUB_SHIFT_AT) & 31;
        self.sub[(entry & SUB_BASE) as usize + (key >> shift) as usize]
    }

    /// Whether the staged batch stages `block` (one of [`blocks`], `coarse` giving each
    /// address's coarse address): whether enough of its sample counts under `rule`
    /// ([`sample`], [`worth_staging`]). The batch and the lines model ([`super::lines`]) both
    /// decide through here.
    #[inline(always)]
    pub fn stages<T>(&self, rule: Rule, block: &[T], coarse: impl Fn(&T) -> u64) -> bool {
        worth_staging(
            sample(block)
                .filter(|a| {
                    let entry = self.entry(coarse(a));
                    entry & ANSWERED != 0
                        || (rule == Rule::AnsweredOrDeeper && deep_searches(entry).is_some())
                })
                .count(),
        )
    }

    /// Where a lane whose staged (or sub-table) entry is the walk entry `entry` starts: the
    /// node and the searches left from it, of a table of depth `depth`.
    pub fn start(entry: u32, depth: usize) -> (u32, usize) {
        (entry & ENTRY_NODE, deep_searches(entry).unwrap_or(depth))
    }

    /// Bytes of both tables.
    pub fn bytes(&self) -> usize {
        std::mem::size_of_val(&*self.entries) + std::mem::size_of_val(&*self.sub)
    }

    /// Chunks with a sub-table.
    pub fn split_chunks(&self) -> usize {
        self.entries.iter().filter(|&&e| is_split(e)).count()
    }

    /// The sub-tables' entries by what a lane that reads one does (`ipfib stats`).
    pub fn sub_entries(&self) -> SubEntries {
        let mut kinds = SubEntries::default();
        for &entry in self.sub.iter() {
            let kind = if entry & ANSWERED != 0 {
                &mut kinds.answered
            } else {
                match deep_searches(entry) {
                    Some(1) => &mut kinds.leaf,
                    Some(2) => &mut kinds.near,
                    Some(_) => &mut kinds.mid,
                    None => &mut kinds.root,
                }
            };
            *kind += 1;
        }
        kinds
    }
}

/// Sub-table entries by kind ([`Staged::sub_entries`]): answers, and walks that start at their
/// block's leaf ([`ENTER_LEAF`]), at the node above it ([`ENTER_NEAR`]) or at the chunk's
/// entry node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubEntries {
    /// Entries that answer.
    pub answered: usize,
    /// Walks of one search, from the block's leaf.
    pub leaf: usize,
    /// Walks of two searches, from the node above the block's leaf.
    pub near: usize,
    /// Walks of three searches, from the node two above the block's leaf ([`ENTER_MID`]).
    pub mid: usize,
    /// Full walks, from the chunk's entry node.
    pub root: usize,
}

/// The marks of a walk entry whose lane starts `searches` searches from its answer, below its
/// chunk's entry node: [`ENTER_LEAF`], [`ENTER_NEAR`] or [`ENTER_MID`] (`None` past three: a
/// walk from the entry node carries no mark). The inverse of [`deep_searches`].
#[inline(always)]
pub const fn deep_marks(searches: usize) -> Option<u32> {
    match searches {
        1 => Some(ENTER_LEAF),
        2 => Some(ENTER_NEAR),
        3 => Some(ENTER_MID),
        _ => None,
    }
}

/// The searches left to a lane whose walk entry (not an answer) is `entry`, when its marks
/// start it below the entry node (`None`: a walk from the entry node, the table's depth).
#[inline(always)]
pub const fn deep_searches(entry: u32) -> Option<usize> {
    match entry & ENTER_MID {
        ENTER_LEAF => Some(1),
        ENTER_NEAR => Some(2),
        ENTER_MID => Some(3),
        _ => None,
    }
}

/// Whether a direct entry of [`Staged`] is a split entry ([`SPLIT`] without [`ANSWERED`]).
#[inline(always)]
pub const fn is_split(entry: u32) -> bool {
    entry & (ANSWERED | SPLIT) == SPLIT
}

/// The `[chunk, bits]` pairs of the split entries among staged direct entries `entries`.
fn split_pairs(entries: &[u32]) -> Vec<u32> {
    (0u32..)
        .zip(entries.iter())
        .filter(|&(_, &e)| is_split(e))
        .flat_map(|(chunk, &e)| [chunk, KEY_BITS - ((e >> SUB_SHIFT_AT) & 31)])
        .collect()
}

/// Whether `t`'s structure takes staged tables, whatever the CPU: an IPv6 table of a depth
/// the staged walk is compiled for, in one segment, whose entries have room for the marks.
pub(super) fn stages_structure<A: Family>(t: &PlanB<A>) -> bool {
    let lines = t.tree().lines();
    let ipv6_keys = A::COARSE_BITS - DIRECT_BITS == KEY_BITS;
    A::STAGED
        && ipv6_keys
        && STAGED_DEPTHS.contains(&t.tree().depth())
        && t.tree().pages().is_empty()
        && lines <= ENTRY_NODE as usize + 1
}

/// Whether `chunk` has more than one range, the least a sub-table needs to split.
fn has_ranges_to_split<A: Family>(t: &PlanB<A>, chunk: usize) -> bool {
    t.ranges(chunk).nth(1).is_some()
}

/// `splits` ([`Staged::splits`]) as (chunk, width) pairs, if they keep the staged walk in
/// bounds: ascending chunks of more than one range, widths of [`SUB_WIDTHS`], and no more
/// entries in all than `t`'s budget. (The greedy would not make every such choice, but any
/// of them answers right.)
fn checked_splits<A: Family>(t: &PlanB<A>, splits: &[u32]) -> Result<Vec<(usize, u32)>, String> {
    if !splits.len().is_multiple_of(2) {
        return Err(format!(
            "{} words of sub-table choice, not pairs",
            splits.len()
        ));
    }
    let budget = sub_budget(t.line_bytes()) / 4;
    let mut used = 0usize;
    let mut chosen: Vec<(usize, u32)> = Vec::with_capacity((splits.len() / 2).min(budget / 4));
    for pair in splits.chunks_exact(2) {
        let (chunk, b) = (pair[0] as usize, pair[1]);
        if chunk >= t.tree().flat_direct().len() || chosen.last().is_some_and(|&(c, _)| c >= chunk)
        {
            return Err(format!(
                "sub-table chunk {chunk}: out of range or out of order"
            ));
        }
        if !SUB_WIDTHS.contains(&b) {
            return Err(format!("sub-table of chunk {chunk}: width {b} bits"));
        }
        if !has_ranges_to_split(t, chunk) {
            return Err(format!("sub-table of chunk {chunk}, which has one range"));
        }
        used += 1 << b;
        if used > budget {
            return Err(format!(
                "sub-tables of {used} entries, past the budget of {budget}"
            ));
        }
        chosen.push((chunk, b));
    }
    Ok(chosen)
}

/// The direct table of `t` with every chunk one answer covers replaced by that answer. Chunks
/// with the same entry node have the same answer: the test in [`answer_of`] walks the same two
/// keys (the first and the last of a chunk) from that node. So each distinct entry is walked
/// once, and runs of equal entries (the empty chunks of a real table, mostly contiguous) skip
/// the map too: 65,536 map lookups alone cost a small table's build ~3 ms (`builder.rs`).
fn answered_entries<A: Family>(t: &PlanB<A>) -> Box<[u32]> {
    let mut seen: HashMap<u32, u32> = HashMap::new();
    let mut last: Option<(u32, u32)> = None;
    let low_bits = A::COARSE_BITS - DIRECT_BITS;
    (0..1u64 << DIRECT_BITS)
        .map(|chunk| {
            let entry = t.tree().entry(chunk as usize);
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
        .collect()
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
    let line = &t.tree().lines_of(0)[leaf as usize];
    answered(A::Key::decode_in(line, rank, t.tree().narrow()))
}

/// A leaf answer as an answered entry, if one holds it (not a fallback cell, nor a hop wider
/// than [`ANSWERED_HOP`]).
fn answered(decoded: Decoded) -> Option<u32> {
    match decoded {
        Decoded::Cell(_) => None,
        Decoded::NoRoute => Some(ANSWERED | ANSWERED_MISS),
        Decoded::Hop(hop) => (hop <= ANSWERED_HOP).then_some(ANSWERED | hop),
    }
}

/// Whether batches take the staged walk on `backend`, and by which [`Rule`]: where
/// measurement says it pays. Every backend has a staged kernel (tested against the intervals
/// on every machine) and every table has the same staged tables. On the AVX2-only AMD EPYC
/// (Zen 3), against the uniform walk (`scripts/ab-planb.sh`, dfz10, 2 M addresses, 7 rounds,
/// BENCHMARKS.md): the portable staging step 1.01× uniform and 0.83× matched, so the scalar
/// and NEON backends take the uniform walk; AVX2's gather step stages by answered lanes only
/// (counting deeper starts too it read 1.28× uniform but 0.85× matched). AVX-512 (gathers
/// and compresses: dfz10 uniform 1.6–1.7× on a Xeon) also stages blocks of deeper starts.
pub fn rule(backend: crate::engine::Backend) -> Option<Rule> {
    use crate::engine::Backend;
    #[cfg(test)]
    if let Some(rule) = tests::EVERY_BACKEND.get() {
        return Some(rule);
    }
    match backend {
        Backend::Avx512 => Some(Rule::AnsweredOrDeeper),
        Backend::Avx2 => Some(Rule::Answered),
        _ => None,
    }
}

/// The staged batch of `addrs` into `out`, if `t` has staged tables and the addresses a
/// layout the staging steps load (`InputLayout`: the integers or their network-order bytes);
/// false, with nothing written, otherwise. Batches of 2^32 addresses or more take the uniform
/// walk: the staged one keeps lane positions in 32 bits. The one place that picks a staged
/// kernel: the table's backend ([`Kernel`]).
pub fn batch<I: AddressInput<u128>>(
    t: &PlanB<u128>,
    addrs: &[I],
    out: &mut [NextHop],
    miss: NextHop,
) -> bool {
    let Some(staged) = t.staged.as_ref() else {
        return false;
    };
    let Some(rule) = rule(t.cpu.backend()) else {
        return false;
    };
    if u32::try_from(addrs.len()).is_err() {
        return false;
    }
    // SAFETY: `t` satisfies the structure invariants and has staged tables only when it has
    // one segment and a depth of `STAGED_DEPTHS` (`stages_structure`), and `staged` are its
    // tables; the layout says what `I` is; positions fit 32 bits; each token proves its CPU
    // features.
    unsafe { crate::cpu::with_token!(t.cpu, s => run(t, s, staged, rule, addrs, out, miss)) }
}

/// [`Kernel::walk`] for the layout of `I`; false for a layout it does not load.
///
/// # Safety
/// As for [`Kernel::walk`], whatever `I` is.
#[inline(always)]
unsafe fn run<S: Kernel, I: AddressInput<u128>>(
    t: &PlanB<u128>,
    s: S,
    staged: &Staged,
    rule: Rule,
    addrs: &[I],
    out: &mut [NextHop],
    miss: NextHop,
) -> bool {
    // SAFETY: caller's contract, with `SWAP` as the layout says.
    unsafe {
        match I::LAYOUT {
            InputLayout::Native => S::walk::<I, false>(t, s, staged, rule, addrs, out, miss),
            InputLayout::NetworkOrder => S::walk::<I, true>(t, s, staged, rule, addrs, out, miss),
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::layout::entry_line;
    use super::*;
    use crate::engine::{Backend, Build, BuildOptions, DetailValue, Lookup};
    use crate::interval::Intervals;
    use crate::prefix::Prefix;
    use crate::route_table::RouteTable;

    /// An IPv6 table deep enough for the staged walk: a chunk (2001::/16) with thousands of
    /// boundaries, beside chunks one route covers whole, a chunk with no route, a fallback
    /// cell, and routes at the top of the space; `wide`: 2003::/16 has a hop too wide for an
    /// answered entry (and the leaves are wide), else one that fits 16 bits (narrow leaves).
    pub(super) fn table(wide: bool) -> RouteTable<u128> {
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
        routes.extend(wide_routes_in_2006());
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

    /// 2006::/16: a route over the chunk and 200 /28s in it, each inside a few blocks of a
    /// sub-table: blocks that enter their leaf, or the node above it. Few routes over much of
    /// the routed space.
    pub(super) fn wide_routes_in_2006() -> impl Iterator<Item = (Prefix<u128>, NextHop)> {
        (0..200u128)
            .map(|i| {
                let addr = (0x2006u128 << 112) | ((i * 19) << 100);
                (Prefix::covering(addr, 28), 20 + (i % 5) as NextHop)
            })
            .chain([(Prefix::covering(0x2006u128 << 112, 16), 19)])
    }

    /// Seeded pseudo-random IPv6 addresses (xorshift64, two draws an address).
    pub(super) fn random_addresses(mut state: u64) -> impl FnMut() -> u128 {
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        move || (u128::from(next()) << 64) | u128::from(next())
    }

    std::thread_local! {
        /// Set by a test to have batches take the staged walk on every backend, whether it
        /// pays there or not ([`rule`]), so that every kernel is tested on every machine.
        pub(super) static EVERY_BACKEND: std::cell::Cell<Option<Rule>> = const { std::cell::Cell::new(None) };
    }

    fn chunk_range(chunk: u128) -> [u128; 3] {
        let first = chunk << 112;
        [first, first | (u128::MAX >> 17), first | (u128::MAX >> 16)]
    }

    /// Batches take the staged walk by default only on AVX-512, where it pays.
    #[test]
    fn batches_stage_by_default_only_where_it_pays() {
        for backend in Backend::ALL {
            let expected = match backend {
                Backend::Avx512 => Some(Rule::AnsweredOrDeeper),
                Backend::Avx2 => Some(Rule::Answered),
                _ => None,
            };
            assert_eq!(rule(backend), expected, "{backend}");
        }
        EVERY_BACKEND.set(Some(Rule::AnsweredOrDeeper));
        assert!(Backend::ALL.into_iter().all(|b| rule(b).is_some()));
    }

    #[test]
    fn deep_marks_and_deep_searches_are_inverse() {
        let node = 0x0abc_def0 & ENTRY_NODE;
        for searches in 0..8 {
            match deep_marks(searches) {
                Some(marks) => {
                    assert_eq!(deep_searches(marks | node), Some(searches));
                    assert_eq!(Staged::start(marks | node, 6), (node, searches));
                }
                None => assert!(!(1..=3).contains(&searches), "{searches} searches unmarked"),
            }
        }
        assert_eq!(deep_searches(node), None);
        assert_eq!(Staged::start(node, 5), (node, 5));
    }

    #[test]
    fn answered_entries_are_what_every_address_of_the_chunk_gets() {
        for wide in [false, true] {
            answered_entries_in(wide);
        }
    }

    fn answered_entries_in(wide: bool) {
        let table = table(wide);
        let intervals = Intervals::from_table(&table);
        let planb = PlanB::build(&table, &BuildOptions::default()).unwrap();
        assert_eq!(planb.tree().narrow(), !wide);
        assert!(planb.tree().depth() >= 3, "deep enough to stage");
        let staged = planb.staged.as_ref().expect("staged tables");
        // An answered entry is what every address of its range gets, checked at its first,
        // its middle and its last address; a walk entry names the deepest node that the walks
        // of its first and last address (so of every address between) both pass, if that is
        // the leaf or the node above it, and is the chunk's direct entry otherwise.
        let lines = planb.tree().lines_of(0);
        let (mut leaf_entries, mut near_entries, mut mid_entries, mut root_entries) = (0, 0, 0, 0);
        // The nodes the walk of `addr` passes, from the entry node to the leaf.
        let path = |addr: u128, chunk: usize| {
            let x = (addr >> 80) as u32;
            let mut at = entry_line(planb.tree().entry(chunk));
            let mut nodes = vec![at];
            for _ in 1..planb.tree().depth() {
                let n = &lines[at as usize];
                at = <u32 as Key>::link(n) + <u32 as Key>::rank_inner(Scalar, n, x);
                nodes.push(at);
            }
            nodes
        };
        let mut check = |entry: u32, first: u128, last: u128, chunk: usize, sub: bool| {
            if entry & ANSWERED == 0 && !sub {
                assert_eq!(
                    entry,
                    planb.tree().entry(chunk),
                    "a chunk's walk entry is its direct entry"
                );
                return false;
            }
            if entry & ANSWERED == 0 {
                let (node, searches) = Staged::start(entry, planb.tree().depth());
                // The deepest node both ends of the range pass (so every address between).
                let (a, z) = (path(first, chunk), path(last, chunk));
                let shared = a.iter().zip(&z).take_while(|(x, y)| x == y).count();
                let start = match planb.tree().depth() - shared {
                    0 => 1,
                    1 => 2,
                    2 => 3,
                    _ => planb.tree().depth(),
                };
                assert_eq!(searches, start, "{first:#x}: the deepest node it can enter");
                if searches == planb.tree().depth() {
                    assert_eq!(
                        entry,
                        planb.tree().entry(chunk),
                        "a walk entry from the root is the direct entry"
                    );
                    root_entries += 1;
                    return false;
                }
                leaf_entries += usize::from(searches == 1);
                near_entries += usize::from(searches == 2);
                mid_entries += usize::from(searches == 3);
                assert_eq!(
                    node,
                    a[planb.tree().depth() - searches],
                    "{first:#x}: the entry's node"
                );
                return false;
            }
            let want = (entry & ANSWERED_MISS == 0).then_some(entry & ANSWERED_HOP);
            for addr in [first, first + (last - first) / 2, last] {
                assert_eq!(intervals.lookup(addr), want, "{addr:#x}");
            }
            true
        };
        let (mut answered, mut sub_used, mut sub_answered_all) = (0, 0, 0);
        for (chunk, &entry) in staged.entries.iter().enumerate() {
            let [first, _, last] = chunk_range(chunk as u128);
            if !is_split(entry) {
                answered += usize::from(check(entry, first, last, chunk, false));
                continue;
            }
            let shift = (entry >> SUB_SHIFT_AT) & 31;
            let base = (entry & SUB_BASE) as usize;
            let blocks = 1usize << (KEY_BITS - shift);
            assert!(
                SUB_WIDTHS.contains(&(KEY_BITS - shift)),
                "{chunk:#x}: width"
            );
            assert_eq!(
                base, sub_used,
                "{chunk:#x}: sub-tables in chunk order, end to end"
            );
            sub_used += blocks;
            let sub = &staged.sub[base..base + blocks];
            let block_bits = shift + 80;
            let mut sub_answered = 0;
            for (i, &e) in sub.iter().enumerate() {
                let first = first | ((i as u128) << block_bits);
                let last = first | ((1u128 << block_bits) - 1);
                sub_answered += usize::from(check(e, first, last, chunk, true));
                // The lookup path reads the same entry.
                assert_eq!(staged.entry((first >> 80) as u64), e);
                assert_eq!(staged.entry((last >> 80) as u64), e);
            }
            assert!(
                sub_answered > 0,
                "{chunk:#x}: a sub-table answers some block"
            );
            sub_answered_all += sub_answered;
        }
        assert_eq!(sub_used, staged.sub.len(), "sub-tables fill the array");
        // What `ipfib stats` reports, read from the flags, is what the walks above say.
        assert_eq!(
            staged.sub_entries(),
            SubEntries {
                answered: sub_answered_all,
                leaf: leaf_entries,
                near: near_entries,
                mid: mid_entries,
                root: root_entries,
            }
        );
        assert!(
            leaf_entries > 0 && near_entries > 0 && (mid_entries > 0) == (planb.tree().depth() > 3),
            "blocks enter at their leaf ({leaf_entries}), above it ({near_entries}) and two \
             above it ({mid_entries}), depth {}",
            planb.tree().depth()
        );
        assert!(
            staged.sub.len() * 4 <= sub_budget(planb.line_bytes()),
            "within the budget"
        );
        let is_answered = |chunk: usize| staged.entries[chunk] & ANSWERED != 0;
        let is_split = |chunk: usize| is_split(staged.entries[chunk]);
        // One route, no route, a covering /4: answered. Boundaries inside (a /20, a /64, the
        // deep chunk, the /128 at the top), or a hop wider than 30 bits: walked.
        for chunk in [0x2002, 0x0001, 0x2fff, 0xfffe] {
            assert!(is_answered(chunk), "{chunk:#x} answered");
        }
        for chunk in [0x2001, 0x2004, 0x2005, 0xffff] {
            assert!(!is_answered(chunk), "{chunk:#x} walked");
        }
        // The deep chunk's boundaries are all in 2001:db8::/32: the /4 answers the rest of
        // it, the most routed space a sub-table can answer here.
        assert!(is_split(0x2001), "the deep chunk has a sub-table");
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
    fn lines_model_follows_the_staged_batch() {
        EVERY_BACKEND.set(Some(Rule::AnsweredOrDeeper));
        let planb = PlanB::build(&table(false), &BuildOptions::default()).unwrap();
        let staged = planb.staged.as_ref().unwrap();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        // Random addresses (nearly all in answered chunks), addresses in 2001::/16, where the
        // sub-table answers most and the rest walk from the entry node, and in 2006::/16, where
        // the rest walk from their leaf or the node above it.
        let addrs: Vec<u128> = (0..6 * BLOCK)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let a = (u128::from(state) << 64) | u128::from(state.rotate_left(29));
                match i / (2 * BLOCK) {
                    0 => a,
                    1 => (0x2001u128 << 112) | (a >> 16),
                    _ => (0x2006u128 << 112) | (a >> 16),
                }
            })
            .collect();
        // Every block stages: one staged entry each, a sub-table entry in a split chunk, and
        // the walk only when neither answers.
        let expected: usize = addrs
            .iter()
            .map(|&a| {
                let coarse = (a >> 80) as u64;
                let split = is_split(staged.entries[(coarse >> 32) as usize]);
                // The walk from the node the entry names: a line per search, and the
                // fallback stage's as the full walk has them.
                let entry = staged.entry(coarse);
                let walk = match entry & ANSWERED {
                    0 => {
                        Staged::start(entry, planb.tree().depth()).1
                            + planb.lines_touched(a).fallback
                    }
                    _ => 0,
                };
                1 + usize::from(split) + walk
            })
            .sum();
        let average = planb.lines_per_lookup(&addrs).unwrap();
        assert!((average - expected as f64 / addrs.len() as f64).abs() < 1e-9);
        let steps = planb.lines_by_step(&addrs);
        assert_eq!(steps[0], ("direct".to_string(), 0.0));
        assert_eq!(steps[1], ("staged".to_string(), 1.0));
        assert!(
            steps[2].1 > 0.6,
            "two thirds of the addresses are in a split chunk: {steps:?}"
        );
        assert!(
            steps[3].1 > steps[2 + planb.tree().depth()].1,
            "some walks start below the entry node: {steps:?}"
        );
        assert!(
            average < 2.0,
            "most lookups end in the staged tables: {average}"
        );
        // A last block shorter than `BLOCK` is staged too (here one of 1,040 addresses after
        // a whole block, and 5 addresses past it that walk).
        let partial = &addrs[..BLOCK + MIN_BLOCK + 21];
        let cut: Vec<_> = blocks(partial.len()).collect();
        assert_eq!(cut, [0..BLOCK, BLOCK..BLOCK + MIN_BLOCK + 16]);
        let staged_steps = planb.lines_by_step(&partial[..BLOCK + MIN_BLOCK + 16]);
        assert_eq!(staged_steps[1], ("staged".to_string(), 1.0));
        let steps = planb.lines_by_step(partial);
        assert_eq!(
            steps[1].1 * partial.len() as f64,
            (BLOCK + MIN_BLOCK + 16) as f64,
            "all but the last 5 lookups staged"
        );
        // Shorter than the shortest block: not staged, the uniform walk's lines.
        let short = &addrs[..MIN_BLOCK - 1];
        let steps = planb.lines_by_step(short);
        assert_eq!(steps[0], ("direct".to_string(), 1.0));
        let walked: usize = short.iter().map(|&a| planb.lines_touched(a).total()).sum();
        assert_eq!(
            planb.lines_per_lookup(short),
            Some(walked as f64 / short.len() as f64)
        );
        // Every backend stages the same blocks: the model does not depend on the backend.
        let model = planb.lines_by_step(&addrs);
        for backend in Backend::available() {
            let mut other = planb.clone();
            other.set_backend(backend).unwrap();
            assert_eq!(other.lines_by_step(&addrs), model, "{backend}");
        }
    }

    /// A saved table keeps the choice of sub-tables ([`Staged::splits`]), and opening it makes
    /// the same staged tables from that choice as a build makes by choosing.
    #[test]
    fn the_choice_of_sub_tables_is_saved_and_made_again() {
        let reread = |planb: &PlanB<u128>| {
            let back = super::super::saved::reread(planb, None, Backend::Scalar).unwrap();
            back.staged.unwrap()
        };
        for wide in [false, true] {
            let mut planb = PlanB::build(&table(wide), &BuildOptions::default()).unwrap();
            let staged = planb.staged.clone().unwrap();
            let splits = staged.splits();
            assert!(
                splits.len() >= 4,
                "the test table splits chunks: {splits:?}"
            );
            let again = Staged::with_splits(&planb, &splits).unwrap().unwrap();
            assert_eq!(again.entries, staged.entries);
            assert_eq!(again.sub, staged.sub);
            let back = reread(&planb);
            assert_eq!(back.entries, staged.entries);
            assert_eq!(back.sub, staged.sub);
            // A file without the choice (written before `SPLITS` existed) chooses at open.
            let chosen =
                super::super::saved::reread_without_splits(&planb, Backend::Scalar).unwrap();
            let chosen = chosen.staged.unwrap();
            assert_eq!(chosen.entries, staged.entries);
            assert_eq!(chosen.sub, staged.sub);
            // Without staged tables (as in a table rebuilt in part) the file is the same: the
            // choice is made from the structure.
            let file = |planb: &PlanB<u128>| {
                super::super::saved::file_bytes(planb, None, Staged::choice(planb))
            };
            let with_staged = file(&planb);
            planb.staged = None;
            assert_eq!(Staged::choice(&planb), Some(splits));
            assert!(file(&planb) == with_staged, "the file depends on the CPU");
        }
    }

    /// A table built with any backend has the same staged tables, the same saved file and the
    /// same figures in `stats` (but the backend's name): nothing depends on the CPU.
    #[test]
    fn staged_tables_and_files_do_not_depend_on_the_backend() {
        let table = table(false);
        let figures = |planb: &PlanB<u128>| {
            let mut d = planb.describe();
            d.retain(|d| d.name != "node_search");
            format!("{d:?} {}", planb.memory_bytes())
        };
        let first = PlanB::build(&table, &BuildOptions::with_backend(Backend::Scalar)).unwrap();
        let file = super::super::saved::file_bytes(&first, None, Staged::choice(&first));
        let staged = first
            .staged
            .clone()
            .expect("staged on the portable backend");
        for backend in Backend::available() {
            let planb = PlanB::build(&table, &BuildOptions::with_backend(backend)).unwrap();
            let again = planb.staged.as_ref().expect("staged");
            assert_eq!(again.entries, staged.entries, "{backend}");
            assert_eq!(again.sub, staged.sub, "{backend}");
            let bytes = super::super::saved::file_bytes(&planb, None, Staged::choice(&planb));
            assert!(bytes == file, "{backend}: another saved file");
            assert_eq!(figures(&planb), figures(&first), "{backend}");
        }
    }

    /// The choice of sub-tables is made on every CPU where the structure takes the staged walk
    /// (so saved files hold it wherever they are written), and nowhere else.
    #[test]
    fn the_choice_of_sub_tables_does_not_need_avx512() {
        for wide in [false, true] {
            let table = table(wide);
            let mut planb = PlanB::build(&table, &BuildOptions::default()).unwrap();
            planb.staged = None;
            let splits = Staged::choice(&planb).expect("an IPv6 table of depth 3 or more");
            assert!(
                splits.len() >= 4,
                "the test table splits chunks: {splits:?}"
            );
            let budget = sub_budget(planb.line_bytes()) / 4;
            let entries: usize = splits.chunks(2).map(|pair| 1usize << pair[1]).sum();
            assert!(
                entries <= budget,
                "{entries} sub-table entries, budget {budget}"
            );
            let again = Staged::with_splits(&planb, &splits);
            assert!(
                again.is_ok(),
                "the choice is one an open accepts: {again:?}"
            );
        }
        let shallow: RouteTable<u128> = [(Prefix::covering(0x2001u128 << 112, 32), 1)]
            .into_iter()
            .collect();
        let planb = PlanB::build(&shallow, &BuildOptions::default()).unwrap();
        assert!(planb.tree().depth() < *STAGED_DEPTHS.start());
        assert_eq!(Staged::choice(&planb), None);
        let ipv4: RouteTable<u32> = [(Prefix::new(0x0a00_0000, 8).unwrap(), 1)]
            .into_iter()
            .collect();
        let planb = PlanB::build(&ipv4, &BuildOptions::default()).unwrap();
        assert_eq!(Staged::choice(&planb), None);
    }

    /// Any choice within bounds gives right answers (the sub-tables are made from the
    /// structure), and a choice out of bounds is refused, on every CPU.
    #[test]
    fn a_choice_of_sub_tables_is_checked_not_trusted() {
        EVERY_BACKEND.set(Some(Rule::AnsweredOrDeeper));
        let table = table(false);
        let intervals = Intervals::from_table(&table);
        let mut planb = PlanB::build(&table, &BuildOptions::default()).unwrap();
        let budget = sub_budget(planb.line_bytes()) / 4;
        assert!(
            budget.ilog2() < *SUB_WIDTHS.end(),
            "a width the budget refuses"
        );
        // 2001::/16 at the narrowest width, 2006::/16 at the widest the budget allows.
        let widest = (*SUB_WIDTHS.end()).min(budget.ilog2() - 1);
        let other = [0x2001, 2, 0x2006, widest];
        assert!(Staged::with_splits(&planb, &other).is_ok());
        let full = budget.ilog2();
        let refused: [&[u32]; 10] = [
            &[0x2001],
            &[0x2001, 64],
            &[0x2001, full, 0x2006, full],
            &[0x2006, 4, 0x2001, 4],
            &[0x2001, 4, 0x2001, 5],
            &[0x1_0000, 4],
            &[0x2001, 1],
            &[0x2001, 15],
            &[0x2002, 4],
            &[0x2001, full + 1],
        ];
        assert!(Staged::with_splits(&planb, &[0x2001, full]).is_ok());
        for splits in refused {
            assert!(
                Staged::with_splits(&planb, splits).is_err(),
                "{splits:x?} is refused"
            );
        }
        planb.staged = Staged::with_splits(&planb, &other).unwrap();
        let staged = planb.staged.as_ref().unwrap();
        assert_eq!(staged.splits(), other);
        let mut random = random_addresses(0x2545_f491_4f6c_dd1d);
        for chunk in [0x2001u128, 0x2006] {
            let addrs: Vec<u128> = (0..2 * BLOCK)
                .map(|_| (chunk << 112) | (random() >> 16))
                .collect();
            assert!(
                addrs.chunks(BLOCK).all(|b| staged.stages(
                    Rule::AnsweredOrDeeper,
                    b,
                    |&a| (a >> 80) as u64
                )),
                "{chunk:x}::/16 takes the staged walk"
            );
            for backend in Backend::available() {
                let mut planb = planb.clone();
                planb.set_backend(backend).unwrap();
                let mut out = vec![0; addrs.len()];
                planb.lookup_batch_raw(&addrs, &mut out, u32::MAX).unwrap();
                for (&a, &got) in addrs.iter().zip(&out) {
                    let want = intervals.lookup(a).unwrap_or(u32::MAX);
                    assert_eq!(got, want, "{backend}: {a:#x}");
                }
            }
        }
    }

    #[test]
    fn staged_tables_are_one_segment_ipv6_tables_of_depth_three_or_more() {
        let shallow: RouteTable<u128> = [(Prefix::covering(0x2001u128 << 112, 16), 1)]
            .into_iter()
            .collect();
        let planb = PlanB::build(&shallow, &BuildOptions::default()).unwrap();
        assert!(
            planb.tree().depth() < 3 && planb.staged.is_none(),
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
        for backend in Backend::available() {
            let planb = PlanB::build(&table(false), &BuildOptions::with_backend(backend)).unwrap();
            assert!(
                planb.staged.is_some(),
                "a deep IPv6 table is staged on {backend}"
            );
        }
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

        // A live table's rebuild appends to its one segment: still no staged tables (their
        // choice would cost every publish work proportional to the table), until a merge.
        let live = BuildOptions {
            for_updates: true,
            ..BuildOptions::default()
        };
        let planb = PlanB::build(&table(false), &live).unwrap();
        assert!(planb.staged.is_some());
        let appended = PlanB::from_parts(
            planb.partial_parts(&deep, &[changed]).unwrap(),
            planb.backend(),
        )
        .unwrap();
        assert_eq!(appended.tree().segments().len(), 1);
        assert!(appended.staged.is_none(), "not staged after an append");
        // A merge while updates arrive leaves the staged tables out; a settling one makes them,
        // even when there is nothing else to merge.
        let merged = PlanB::from_parts(
            appended.merged_parts(false, &|| false).unwrap(),
            planb.backend(),
        )
        .unwrap();
        assert_eq!(merged.tree().segments().len(), 1);
        assert!(
            merged.staged.is_none(),
            "not staged by a merge without stage"
        );
        assert!(merged.merged_parts(false, &|| false).is_none());
        let settled = PlanB::from_parts(
            merged.merged_parts(true, &|| false).unwrap(),
            planb.backend(),
        )
        .unwrap();
        assert!(
            settled.staged.is_some(),
            "staged again after a settling merge"
        );
        assert!(settled.merged_parts(true, &|| false).is_none());
        assert_eq!(
            settled.staged.as_ref().map(|s| s.splits()),
            planb.staged.as_ref().map(|s| s.splits()),
            "the same choice as the full build's"
        );
    }

    /// Batches of every shape through `lookup_batch_raw` and `lookup_batch_bytes_raw`: blocks the sample stages (random
    /// addresses, most in answered chunks), blocks it does not (all in the deep chunk and the
    /// fallback cell), mixed runs and short tails, each miss value, against the intervals.
    #[test]
    fn staged_batches_answer_as_the_intervals_do() {
        EVERY_BACKEND.set(Some(Rule::AnsweredOrDeeper));
        for backend in Backend::available() {
            for wide in [false, true] {
                staged_batches_in(backend, wide);
            }
        }
    }

    fn staged_batches_in(backend: Backend, wide: bool) {
        let table = table(wide);
        let intervals = Intervals::from_table(&table);
        let planb = PlanB::build(&table, &BuildOptions::with_backend(backend)).unwrap();
        assert_eq!(planb.backend(), backend);
        let mut random = random_addresses(0x9e37_79b9_7f4a_7c15);
        let spread: Vec<u128> = (0..4 * BLOCK).map(|_| random()).collect();
        // In the dense part of 2001:db8::/32 and in the fallback cell: walked.
        let deep: Vec<u128> = (0..3 * BLOCK)
            .map(|i| match i % 3 {
                0 => (0x2001_0db8u128 << 96) | (random() >> 34),
                1 => (0x2005_0001_0002u128 << 80) | (random() >> 48),
                _ => (0x2001_0db8_1000u128 << 80) | (random() >> 56),
            })
            .collect();
        // Anywhere in 2001::/16: most answered by its sub-table, a few walked.
        let split_chunk: Vec<u128> = (0..3 * BLOCK)
            .map(|_| (0x2001u128 << 112) | (random() >> 16))
            .collect();
        // Anywhere in 2006::/16: answered, or entering the walk at a leaf or the node above.
        let entering: Vec<u128> = (0..3 * BLOCK)
            .map(|_| (0x2006u128 << 112) | (random() >> 16))
            .collect();
        let staged = planb.staged.as_ref().unwrap();
        let staged_block =
            |block: &[u128]| staged.stages(Rule::AnsweredOrDeeper, block, |&a| (a >> 80) as u64);
        let searches = |a: u128| match staged.entry((a >> 80) as u64) {
            e if e & ANSWERED != 0 => 0,
            e => Staged::start(e, planb.tree().depth()).1,
        };
        for class in [0, 1, 2] {
            assert!(
                entering[..BLOCK].iter().any(|&a| searches(a) == class),
                "lanes {class} searches from their answer"
            );
        }
        assert!(staged_block(&entering[..BLOCK]), "2006::/16 is staged");
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
        assert!(
            staged_block(&split_chunk[..BLOCK]),
            "a chunk its sub-table mostly answers is"
        );
        assert!(
            split_chunk
                .iter()
                .any(|&a| staged.entry((a >> 80) as u64) & ANSWERED == 0),
            "and some of its lanes walk"
        );
        let mixed: Vec<u128> = [
            &spread[..BLOCK],
            &deep[..2 * BLOCK],
            &halves[..],
            &split_chunk[..],
            &entering[..],
            &spread[BLOCK..],
        ]
        .concat()
        .into_iter()
        .chain(chunk_range(0x2002).into_iter().chain([u128::MAX, 0]))
        .collect();
        // Every class of walk lanes goes through the staged walk: from the leaf, from one,
        // two nodes above it (in a table deep enough), from the entry node.
        for class in [1, 2, 3, planb.tree().depth()]
            .into_iter()
            .filter(|&c| c <= planb.tree().depth())
        {
            assert!(
                mixed
                    .chunks(BLOCK)
                    .any(|b| staged_block(b) && b.iter().any(|&a| searches(a) == class)),
                "a staged block has lanes {class} searches from their answer"
            );
        }
        for addrs in [
            &mixed[..],
            &spread[..],
            &deep[..],
            &halves[..],
            &split_chunk[..],
            &entering[..],
        ] {
            for (start, len) in [
                (0, addrs.len()),
                (3, 1023),
                (0, 1024),
                (17, 1025),
                (5, 2 * BLOCK + 33),
                (9, BLOCK + MIN_BLOCK + 21),
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
                        assert_eq!(got, want, "{backend}: {a:#x}, miss {miss}");
                        assert_eq!(got_bytes, want, "{backend}: {a:#x} as bytes, miss {miss}");
                    }
                }
            }
        }
    }
}
