//! The choice of sub-tables: which walked chunks get one, and how wide.
//!
//! A sub-table of width `b` gives each of a chunk's `2^b` blocks an answer, or the deepest
//! node that holds the whole block, so a lane skips the searches above it. Which chunks, and
//! how wide, is chosen greedily by the searches a sub-table entry saves per lookup, for two
//! traffics evenly mixed ([`Traffic`]): a uniform-depth walk serves both worst in the densest
//! chunks, but spread traffic weighs a chunk by its routed space and matched traffic by its
//! routes. The greedy's value for each width is found without a pass over all `2^b` blocks
//! (only blocks an inner key splits differ from the first guess), so the choice costs a build
//! a few milliseconds.

use std::collections::BinaryHeap;

use super::super::layout::{entry_line, Family, Key};
use super::super::PlanB;
use super::{
    answered, deep_marks, has_ranges_to_split, ANSWERED, ANSWERED_MISS, KEY_BITS, SPLIT, SUB_BASE,
    SUB_SHIFT_AT, SUB_WIDTHS,
};

/// A chunk a sub-table could serve: its ranges (chunk-relative starts, answered entries or
/// `None`), the keys of its tree's inner nodes with their levels (0: the entry node), and,
/// once [`Candidate::valued`] (the choice needs them, making a chosen sub-table does not), per
/// width in [`SUB_WIDTHS`] and [`Traffic`] the searches a sub-table of that width saves,
/// weighted by that traffic's mass in each block: a block one answer covers saves the whole
/// walk, a block inside one leaf or one, two nodes above it ([`super::ENTER_LEAF`],
/// [`super::ENTER_NEAR`], [`super::ENTER_MID`]) the searches above that node.
pub(super) struct Candidate {
    chunk: usize,
    depth: usize,
    ranges: Vec<(u64, Option<u32>)>,
    /// Per traffic of [`TRAFFICS`], its mass before each range (routed ranges only: a route,
    /// or a fallback cell, which holds longer routes).
    before: [Vec<f64>; 2],
    /// Per traffic, the chunk's whole routed mass.
    mass: [f64; 2],
    /// The inner keys with their levels, sorted.
    keys: Vec<(u64, usize)>,
    /// Per traffic, the searches each width saves, weighted by that traffic's mass.
    saved: [Vec<f64>; 2],
    /// What the greedy ranks: the searches saved per lookup of each traffic, mixed
    /// ([`Candidate::weigh`]).
    value: Vec<f64>,
}

/// The traffics a choice of sub-tables serves. A uniform-depth walk serves both worst in the
/// densest chunks, but they weigh the chunk's cells differently: spread traffic by routed
/// space, matched traffic (a route picked evenly, then an address in it) by routes, so that a
/// /48 weighs as much as a /20. Sub-tables chosen for one alone cost the other (session 19,
/// BENCHMARKS.md): chosen by space, a matched lookup rarely starts deeper; chosen by routes,
/// the spread trace lost 5 %.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Traffic {
    /// Addresses spread evenly over the routed space: each routed cell weighs one.
    Spread,
    /// Addresses in routes picked evenly: each routed range weighs one, over its cells.
    Matched,
}

/// Both traffics, in the order of [`Candidate`]'s per-traffic arrays.
const TRAFFICS: [Traffic; 2] = [Traffic::Spread, Traffic::Matched];

/// How much each traffic of [`TRAFFICS`] counts in the choice of sub-tables: evenly. Chosen
/// for either alone, the other lost (session 19); evenly, dfz10 both sped up (session 20).
const EVEN: [f64; 2] = [0.5, 0.5];

impl Traffic {
    /// The mass of one routed cell of a range of `cells` cells.
    fn per_cell(self, cells: u64) -> f64 {
        match self {
            Traffic::Spread => 1.0,
            Traffic::Matched => 1.0 / cells as f64,
        }
    }

    /// The index of its arrays in [`Candidate`].
    fn at(self) -> usize {
        self as usize
    }
}

impl Candidate {
    pub(super) fn new<A: Family>(t: &PlanB<A>, chunk: usize) -> Candidate {
        let ranges: Vec<(u64, Option<u32>)> =
            t.ranges(chunk).map(|(at, d)| (at, answered(d))).collect();
        Candidate {
            chunk,
            depth: t.tree().depth(),
            ranges,
            before: [Vec::new(), Vec::new()],
            mass: [0.0; 2],
            keys: {
                let mut keys = inner_keys(t, chunk);
                keys.sort_unstable();
                keys
            },
            saved: [Vec::new(), Vec::new()],
            value: Vec::new(),
        }
    }

    /// The candidate with what each width saves for each traffic ([`Self::saved_by`]), which
    /// the choice of sub-tables needs and making a chosen one does not. [`Self::weigh`] then
    /// mixes them, once the whole table's masses are known.
    fn valued(mut self) -> Candidate {
        for traffic in TRAFFICS {
            let mut mass = 0.0;
            self.before[traffic.at()] = (0..self.ranges.len())
                .map(|i| {
                    let before = mass;
                    if self.is_routed(i) {
                        let cells = self.range_end(i) - self.ranges[i].0;
                        mass += cells as f64 * traffic.per_cell(cells);
                    }
                    before
                })
                .collect();
            self.mass[traffic.at()] = mass;
            self.saved[traffic.at()] = self.saved_by(traffic);
        }
        self
    }

    /// Sets the value the greedy ranks: for each width, the searches it saves per lookup of
    /// each traffic into the walked chunks (whose masses are `total`), mixed by `mix`.
    fn weigh(&mut self, total: [f64; 2], mix: [f64; 2]) {
        self.value = (0..SUB_WIDTHS.count())
            .map(|w| {
                TRAFFICS
                    .iter()
                    .map(|t| {
                        mix[t.at()] * self.saved[t.at()][w] / total[t.at()].max(f64::MIN_POSITIVE)
                    })
                    .sum()
            })
            .collect();
    }

    /// The searches a sub-table of each width of [`SUB_WIDTHS`] saves, weighted by
    /// `traffic`'s mass: every routed cell saves all but the leaf's search, those in answered
    /// blocks the leaf's too, and those in blocks that inner keys split less (the blocks are
    /// few: at most one per key, found without a pass over all `2^b`). All widths in one pass
    /// over the ranges, and the split blocks' mass by a sweep: a pass and binary searches per
    /// width were most of opening a saved table.
    fn saved_by(&self, traffic: Traffic) -> Vec<f64> {
        let leaf_saved = self.searches_saved(self.depth - 1) as f64;
        let answered_saved = self.depth as f64 - leaf_saved;
        let mut saved = vec![leaf_saved * self.mass[traffic.at()]; SUB_WIDTHS.count()];
        // A range shorter than the narrowest block holds no whole block of any width.
        let narrowest = 1u64 << (KEY_BITS - SUB_WIDTHS.end());
        for (i, &(start, entry)) in self.ranges.iter().enumerate() {
            let end = self.range_end(i);
            if end - start < narrowest || entry.is_none_or(|e| e & ANSWERED_MISS != 0) {
                continue;
            }
            let per_cell = traffic.per_cell(end - start);
            for (v, b) in saved.iter_mut().zip(SUB_WIDTHS) {
                let blocks = whole_blocks(start..end, b);
                let cells = blocks.end.saturating_sub(blocks.start) << (KEY_BITS - b);
                *v += cells as f64 * per_cell * answered_saved;
            }
        }
        for (v, b) in saved.iter_mut().zip(SUB_WIDTHS) {
            let shift = KEY_BITS - b;
            let mut at = 0;
            for (block, level) in self.split_blocks(b) {
                let before = self.mass_from(traffic, &mut at, block << shift);
                let mass = self.mass_from(traffic, &mut at, (block + 1) << shift) - before;
                // Blocks a key splits are never answered (a key ends a range), so this only
                // takes back what the first line gave; the floor guards rounding, not a case.
                *v = (*v - mass * (leaf_saved - self.searches_saved(level) as f64)).max(0.0);
            }
        }
        saved
    }

    /// Whether range `i` is routed: a route, or a fallback cell.
    fn is_routed(&self, i: usize) -> bool {
        self.ranges[i].1.is_none_or(|e| e & ANSWERED_MISS == 0)
    }

    /// `traffic`'s mass in the chunk below `x`.
    #[cfg(test)]
    fn mass_until(&self, traffic: Traffic, x: u64) -> f64 {
        let i = self.ranges.partition_point(|r| r.0 < x).max(1) - 1;
        self.mass_in(traffic, i, x)
    }

    /// `traffic`'s mass below `x` for `x` at or past range `*at`'s start, moving `*at`
    /// forward to the range `x` falls in. A galloping search from `*at`: over ascending `x`
    /// the blocks keys split are often a few ranges apart, and sometimes thousands (a pass
    /// over the ranges per width cost opening dfz10 2 ms, a binary search per block more).
    fn mass_from(&self, traffic: Traffic, at: &mut usize, x: u64) -> f64 {
        let rest = &self.ranges[*at + 1..];
        let mut reach = 1;
        while reach <= rest.len() && rest[reach - 1].0 < x {
            reach *= 2;
        }
        let from = reach / 2;
        *at += from + rest[from..reach.min(rest.len())].partition_point(|r| r.0 < x);
        self.mass_in(traffic, *at, x)
    }

    /// `traffic`'s mass in the chunk below `x`, which is past range `i`'s start and not past
    /// its end.
    fn mass_in(&self, traffic: Traffic, i: usize, x: u64) -> f64 {
        let inside = if self.is_routed(i) {
            let cells = self.range_end(i) - self.ranges[i].0;
            x.saturating_sub(self.ranges[i].0).min(cells) as f64 * traffic.per_cell(cells)
        } else {
            0.0
        };
        self.before[traffic.at()][i] + inside
    }

    /// Calls `f` with each run of width-`b` blocks that lies inside one answerable range, and
    /// that range's answered entry.
    fn each_answered_run(&self, b: u32, mut f: impl FnMut(std::ops::Range<u64>, u32)) {
        for (i, &(start, entry)) in self.ranges.iter().enumerate() {
            let blocks = whole_blocks(start..self.range_end(i), b);
            if let Some(entry) = entry.filter(|_| blocks.end > blocks.start) {
                f(blocks, entry);
            }
        }
    }

    /// The end (exclusive) of range `i`.
    fn range_end(&self, i: usize) -> u64 {
        self.ranges.get(i + 1).map_or(1 << KEY_BITS, |r| r.0)
    }

    /// The width-`b` blocks that inner keys split, in order, each with the level of the
    /// shallowest such key: the deepest node holding the whole block is at that level (every
    /// other block is inside one leaf). A search ranks a key by the node keys below it, so an
    /// inner key `k` sends a block's addresses to different children exactly when `k` and
    /// `k + 1` are both in the block.
    fn split_blocks(&self, b: u32) -> Vec<(u64, usize)> {
        let shift = KEY_BITS - b;
        let mask = (1u64 << shift) - 1;
        // The keys are sorted, so their blocks come in order: one pass keeps each block's
        // shallowest level (a sort per width was a fifth of opening a saved table).
        let mut blocks: Vec<(u64, usize)> = Vec::new();
        for &(k, level) in self.keys.iter().filter(|&&(k, _)| (k + 1) & mask != 0) {
            match blocks.last_mut() {
                Some(last) if last.0 == k >> shift => last.1 = last.1.min(level),
                _ => blocks.push((k >> shift, level)),
            }
        }
        blocks
    }

    /// The level of the deepest node holding the whole of each width-`b` block.
    fn levels(&self, b: u32) -> Vec<usize> {
        let mut levels = vec![self.depth - 1; 1 << b];
        for (block, level) in self.split_blocks(b) {
            levels[block as usize] = level;
        }
        levels
    }

    /// Searches a lane saves when it enters at a node of `level` instead of the entry node:
    /// all but the last one, two or three (the entries a sub-table can give), else none.
    fn searches_saved(&self, level: usize) -> usize {
        if level + 3 >= self.depth {
            level
        } else {
            0
        }
    }

    /// The value at width index `w` of [`SUB_WIDTHS`] (`None`: no sub-table).
    fn value_at(&self, w: Option<usize>) -> f64 {
        w.map_or(0.0, |w| self.value[w])
    }

    /// The sub-table of width `b`: each block's answered entry, the walk entry of the node it
    /// enters ([`deep_marks`]), or the chunk's entry node.
    fn sub_table<A: Family>(&self, t: &PlanB<A>, b: u32) -> Vec<u32> {
        let shift = KEY_BITS - b;
        let root = t.tree().entry(self.chunk);
        let mut sub: Vec<u32> = self
            .levels(b)
            .iter()
            .enumerate()
            .map(|(block, &level)| {
                // A node three searches up in a table of depth 3 is the entry node itself:
                // its entry stays a plain one.
                let Some(flag) = deep_marks(self.depth - level).filter(|_| level > 0) else {
                    return root;
                };
                let key = A::Key::from_coarse((block as u64) << shift);
                flag | t.descend(0, entry_line(root), key, level)
            })
            .collect();
        self.each_answered_run(b, |blocks, entry| {
            sub[blocks.start as usize..blocks.end as usize].fill(entry);
        });
        sub
    }
}

/// The width-`b` blocks that lie wholly inside the chunk-relative cells `cells` (empty, or
/// with `end < start`, when none does).
fn whole_blocks(cells: std::ops::Range<u64>, b: u32) -> std::ops::Range<u64> {
    let shift = KEY_BITS - b;
    (cells.start + (1 << shift) - 1) >> shift..cells.end >> shift
}

/// The keys of the inner nodes of `chunk`'s tree (segment 0), each with its node's level.
fn inner_keys<A: Family>(t: &PlanB<A>, chunk: usize) -> Vec<(u64, usize)> {
    let lines = t.tree().lines_of(0);
    let mut keys = Vec::new();
    let mut nodes = vec![(entry_line(t.tree().entry(chunk)), 0)];
    while let Some((node, level)) = nodes.pop() {
        if level + 1 >= t.tree().depth() {
            continue;
        }
        let line = &lines[node as usize];
        let n = A::Key::keys_in(line, A::Key::INNER_KEYS);
        keys.extend((0..n).map(|i| (A::Key::to_low(A::Key::key_at(line, i)), level)));
        let link = A::Key::link(line);
        nodes.extend((0..=n as u32).map(|c| (link + c, level + 1)));
    }
    keys
}

/// Entries a sub-table of width index `w` takes.
fn sub_entries(w: Option<usize>) -> usize {
    w.map_or(0, |w| 1 << (SUB_WIDTHS.start() + w as u32))
}

/// The widening of candidate `c` from width index `now` (`None`: no sub-table yet) that
/// adds the most value (searches saved per lookup, [`Candidate::weigh`]) per added entry,
/// among those that add at most `room` entries: (gain per entry, width index, added
/// entries).
fn best_widening(c: &Candidate, now: Option<usize>, room: usize) -> Option<(f64, usize, usize)> {
    let have = c.value_at(now);
    let mut best: Option<(f64, usize, usize)> = None;
    for w in now.map_or(0, |w| w + 1)..c.value.len() {
        let added = sub_entries(Some(w)) - sub_entries(now);
        if c.value[w] <= have || added > room {
            continue;
        }
        let gain = (c.value[w] - have) / added as f64;
        if best.is_none_or(|(g, _, _)| gain > g) {
            best = Some((gain, w, added));
        }
    }
    best
}

/// A candidate's best widening in the greedy's heap, ordered by its gain per entry.
struct Widening {
    gain: f64,
    candidate: usize,
    width: usize,
    added: usize,
}

impl PartialEq for Widening {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for Widening {}

impl PartialOrd for Widening {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Widening {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Ties to the lower chunk, so the choice does not depend on the heap's order.
        self.gain
            .total_cmp(&other.gain)
            .then(other.candidate.cmp(&self.candidate))
    }
}

/// Gives chunks of `entries` that are walked sub-tables, within `budget` entries: greedily,
/// the widening (a chunk's first sub-table, or a wider one) that saves the most searches per
/// lookup ([`Candidate::weigh`]) per added entry, until none fits. Returns the sub-tables;
/// `entries` gets the split entries.
///
/// Each candidate has one widening in a heap at a time, its best one when it was pushed,
/// ignoring what has been spent since: an upper bound on what it can still add. So the top
/// is taken when it fits (nothing below can do better), and otherwise replaced by the
/// candidate's best widening that does fit: a build costs a few heap operations per
/// widening, not a pass over every chunk (a table can have thousands of candidates).
pub(super) fn split<A: Family>(t: &PlanB<A>, entries: &mut [u32], budget: usize) -> Box<[u32]> {
    split_for(t, entries, budget, EVEN)
}

/// [`split`] with the traffics mixed by `mix` (tests choose for one traffic alone).
fn split_for<A: Family>(
    t: &PlanB<A>,
    entries: &mut [u32],
    budget: usize,
    mix: [f64; 2],
) -> Box<[u32]> {
    let mut candidates: Vec<Candidate> = (0..entries.len())
        .filter(|&c| entries[c] & ANSWERED == 0 && has_ranges_to_split(t, c))
        .map(|c| Candidate::new(t, c).valued())
        .collect();
    let total = TRAFFICS.map(|t| candidates.iter().map(|c| c.mass[t.at()]).sum::<f64>());
    for c in &mut candidates {
        c.weigh(total, mix);
    }
    let mut width: Vec<Option<usize>> = vec![None; candidates.len()];
    let mut used = 0;
    let push = |heap: &mut BinaryHeap<Widening>, i: usize, now: Option<usize>, room: usize| {
        if let Some((gain, width, added)) = best_widening(&candidates[i], now, room) {
            heap.push(Widening {
                gain,
                candidate: i,
                width,
                added,
            });
        }
    };
    let mut heap = BinaryHeap::new();
    for i in 0..candidates.len() {
        push(&mut heap, i, None, budget);
    }
    while let Some(top) = heap.pop() {
        let i = top.candidate;
        if used + top.added > budget {
            push(&mut heap, i, width[i], budget - used);
            continue;
        }
        used += top.added;
        width[i] = Some(top.width);
        push(&mut heap, i, width[i], budget - used);
    }
    let chosen = candidates
        .into_iter()
        .zip(width)
        .filter_map(|(c, w)| Some((c, SUB_WIDTHS.start() + w? as u32)));
    sub_tables(t, entries, chosen)
}

/// The sub-tables of `chosen` (candidates with their widths, in chunk order), one after
/// another; each chunk's entry in `entries` becomes its split entry.
pub(super) fn sub_tables<A: Family>(
    t: &PlanB<A>,
    entries: &mut [u32],
    chosen: impl Iterator<Item = (Candidate, u32)>,
) -> Box<[u32]> {
    let mut sub = Vec::new();
    for (c, b) in chosen {
        let base = sub.len();
        sub.extend(c.sub_table(t, b));
        debug_assert!(
            base + (1 << b) <= SUB_BASE as usize + 1,
            "sub-table index in the entry"
        );
        entries[c.chunk] = SPLIT | ((KEY_BITS - b) << SUB_SHIFT_AT) | base as u32;
    }
    sub.into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::super::tests::{random_addresses, table, wide_routes_in_2006};
    use super::super::{answered_entries, is_split, sub_budget, Staged};
    use super::*;
    use crate::engine::{Build, BuildOptions};
    use crate::prefix::Prefix;
    use crate::route_table::{NextHop, RouteTable};

    /// The choice's value takes back, for a block inner keys split, what it first counted as
    /// a leaf block: never an answered block, since every key ends a range.
    #[test]
    fn blocks_keys_split_are_never_answered() {
        let planb = PlanB::build(&table(false), &BuildOptions::default()).unwrap();
        let entries = answered_entries(&planb);
        let mut split_seen = 0;
        for chunk in (0..entries.len()).filter(|&c| entries[c] & ANSWERED == 0) {
            let c = Candidate::new(&planb, chunk).valued();
            for b in SUB_WIDTHS {
                let split = c.split_blocks(b);
                split_seen += split.len();
                c.each_answered_run(b, |blocks, _| {
                    assert!(
                        split.iter().all(|(block, _)| !blocks.contains(block)),
                        "{chunk:#x}, width {b}: a split block is answered"
                    );
                });
                let levels = c.levels(b);
                assert!(split.iter().all(|&(block, l)| levels[block as usize] == l));
                assert!(
                    split.iter().all(|&(_, l)| l + 1 < planb.tree().depth()),
                    "inner levels"
                );
            }
        }
        assert!(split_seen > 100, "keys split many blocks: {split_seen}");
    }

    /// Each candidate's searches saved per width and traffic, against a count block by block:
    /// a block inside one answered range saves every search for its mass, any other block the
    /// searches above the deepest node holding it (the leaf, unless an inner key splits the
    /// block). A routed cell's mass is one for spread traffic, one over its range's cells for
    /// matched traffic.
    #[test]
    fn values_are_what_each_block_saves() {
        let planb = PlanB::build(&table(false), &BuildOptions::default()).unwrap();
        let entries = answered_entries(&planb);
        let mut candidates = 0;
        for chunk in 0..entries.len() {
            if entries[chunk] & ANSWERED != 0 || planb.ranges(chunk).nth(1).is_none() {
                continue;
            }
            candidates += 1;
            let c = Candidate::new(&planb, chunk).valued();
            for ((w, b), traffic) in SUB_WIDTHS
                .enumerate()
                .flat_map(|wb| TRAFFICS.map(|t| (wb, t)))
            {
                let shift = KEY_BITS - b;
                let (mut routed, mut pieces) = (vec![0.0; 1 << b], vec![0; 1 << b]);
                let mut answer = vec![None; 1 << b];
                for (i, &(start, entry)) in c.ranges.iter().enumerate() {
                    let end = c.ranges.get(i + 1).map_or(1 << KEY_BITS, |r| r.0);
                    for block in start >> shift..=(end - 1) >> shift {
                        let (from, to) = (block << shift, (block + 1) << shift);
                        if c.is_routed(i) {
                            let mass = match traffic {
                                Traffic::Spread => 1.0,
                                Traffic::Matched => 1.0 / (end - start) as f64,
                            };
                            routed[block as usize] += (end.min(to) - start.max(from)) as f64 * mass;
                        }
                        pieces[block as usize] += 1;
                        answer[block as usize] = entry;
                    }
                }
                let mut level = vec![planb.tree().depth() - 1; 1 << b];
                for &(k, l) in &c.keys {
                    if k >> shift == (k + 1) >> shift {
                        let at = &mut level[(k >> shift) as usize];
                        *at = (*at).min(l);
                    }
                }
                let want: f64 = (0..1 << b)
                    .map(|block| {
                        let answered = pieces[block] == 1
                            && answer[block].is_some_and(|e| e & ANSWERED_MISS == 0);
                        let saved = if answered {
                            planb.tree().depth()
                        } else {
                            c.searches_saved(level[block])
                        };
                        routed[block] * saved as f64
                    })
                    .sum();
                let got = c.saved[traffic.at()][w];
                assert!(
                    (got - want).abs() <= 1e-9 * want.max(1.0),
                    "chunk {chunk:#x}, width {b}, {traffic:?}: {got} against {want}"
                );
            }
        }
        assert!(
            candidates >= 3,
            "the table has chunks to split: {candidates}"
        );
    }

    /// The galloping search gives what the binary search gives, over any ascending run of
    /// points: equal ones, ones in the same range, far apart, and the chunk's end.
    #[test]
    fn mass_by_sweep_matches_the_binary_search() {
        let planb = PlanB::build(&table(false), &BuildOptions::default()).unwrap();
        let c = Candidate::new(&planb, 0x2001).valued();
        assert!(c.ranges.len() > 100, "a chunk of many ranges");
        let starts: Vec<u64> = c.ranges.iter().map(|r| r.0).collect();
        for stride in [1, 2, 3, 17, 400] {
            let mut xs: Vec<u64> = starts
                .iter()
                .step_by(stride)
                .flat_map(|&s| [s, s, s + 1])
                .collect();
            xs.extend([starts[starts.len() - 1] + 5, 1 << KEY_BITS, 1 << KEY_BITS]);
            for traffic in TRAFFICS {
                let mut at = 0;
                for &x in &xs {
                    assert_eq!(
                        c.mass_from(traffic, &mut at, x),
                        c.mass_until(traffic, x),
                        "x {x:#x}, stride {stride}, {traffic:?}"
                    );
                }
            }
        }
    }

    /// The choice serves both traffics. In a table of a chunk of many small routes spread
    /// over it (2001::/16: most of the routes, little of the routed space) and a chunk of a
    /// few wide ones (2006::/16: the other way round), chosen evenly, matched lookups (a route
    /// picked evenly, then an address in it) take fewer searches than when chosen for spread
    /// traffic alone, and spread lookups fewer than when chosen for matched traffic alone.
    #[test]
    fn the_choice_serves_both_traffics() {
        let mut routes: Vec<(Prefix<u128>, NextHop)> = (0..6000u128)
            .map(|i| {
                let addr = (0x2001u128 << 112) | ((i * 715_827) << 80);
                (Prefix::covering(addr, 48), (i % 11) as NextHop)
            })
            .collect();
        routes.extend(wide_routes_in_2006());
        let table: RouteTable<u128> = routes.into_iter().collect();
        let planb = PlanB::build(&table, &BuildOptions::default()).unwrap();
        let mut random = random_addresses(0x9e37_79b9_7f4a_7c15);
        let prefixes: Vec<Prefix<u128>> = table.iter().map(|(p, _)| p).collect();
        let matched: Vec<u128> = (0..20_000)
            .map(|_| {
                let p = prefixes[(random() % prefixes.len() as u128) as usize];
                p.addr() | (random() & u128::MAX.checked_shr(p.len().into()).unwrap_or(0))
            })
            .collect();
        let spread: Vec<u128> = (0..20_000)
            .map(|i| ([0x2001u128, 0x2006][i % 2] << 112) | (random() >> 16))
            .collect();
        let searches = |mix: [f64; 2], addrs: &[u128]| {
            let mut entries = answered_entries(&planb);
            // Room for about 2^9 entries: the two chunks compete for it.
            let budget = sub_budget(planb.line_bytes()) / 16;
            let sub = split_for(&planb, &mut entries, budget, mix);
            let staged = Staged { entries, sub };
            let total: usize = addrs
                .iter()
                .map(|&a| match staged.entry((a >> 80) as u64) {
                    e if e & ANSWERED != 0 => 0,
                    e => Staged::start(e, planb.tree().depth()).1,
                })
                .sum();
            total as f64 / addrs.len() as f64
        };
        let (spread_only, matched_only) = ([1.0, 0.0], [0.0, 1.0]);
        let m = [spread_only, EVEN, matched_only].map(|mix| searches(mix, &matched));
        let s = [spread_only, EVEN, matched_only].map(|mix| searches(mix, &spread));
        // Searches per lookup with the choice for spread traffic alone, evenly, for matched
        // traffic alone: fewer for each traffic the more the choice counts it.
        assert!(m[0] > m[1] && m[1] > m[2], "matched lookups: {m:?}");
        assert!(s[0] < s[1] && s[1] < s[2], "spread lookups: {s:?}");
    }

    #[test]
    fn sub_tables_stay_within_their_budget() {
        let planb = PlanB::build(&table(false), &BuildOptions::default()).unwrap();
        let direct = answered_entries(&planb);
        for budget in [0, 3, 4, 16, 100, 1 << 12] {
            let mut entries = direct.clone();
            let sub = split(&planb, &mut entries, budget);
            assert!(sub.len() <= budget, "{} entries over {budget}", sub.len());
            let splits = entries.iter().filter(|&&e| is_split(e)).count();
            assert_eq!(splits == 0, budget < 4, "budget {budget}: {splits} splits");
            for (e, d) in entries.iter().zip(direct.iter()) {
                assert!(e == d || is_split(*e), "only splits change");
            }
        }
    }
}
